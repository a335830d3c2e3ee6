package transport

import (
	"slices"
	"testing"
	"time"
)

// TestResultsTracksFollowTrackJudges: through the real server and its background fit,
// GET /api/admin/results lists a track's projects in the order of the track's judges
// (docs/behaviour.md#track-prizes), where they disagree with the overall rating: the
// general judges rank P > Y > V, the track's judge Y > V > P; the overall list stays
// P, Y, V, the track's list is Y, V, P, each entry with its track stars, track rating
// and probability of a place.
func TestResultsTracksFollowTrackJudges(t *testing.T) {
	ts := startRatedServer(t)
	ts.must(200, "POST", "/api/admin/options", map[string]any{"judge_tracks": true, "tracks": []string{"T"}}, asAdmin, nil)
	P, Y, V := ts.addProject("P", "T"), ts.addProject("Y", "T"), ts.addProject("V", "T")
	ts.must(200, "POST", "/api/admin/clock/unpause", nil, asAdmin, nil)
	judge := func(name, track string, ranking []string) {
		_, code := ts.addJudge(name, name+"@example.com", track)
		tok := ts.login(code)
		for range 3 {
			ts.must(200, "POST", "/api/judge/next", nil, asJudge(tok), nil)
			ts.must(200, "POST", "/api/judge/finish", map[string]any{"starred": false}, asJudge(tok), nil)
		}
		ts.must(200, "POST", "/api/judge/rank", map[string]any{"ranking": ranking}, asJudge(tok), nil)
	}
	for _, name := range []string{"ada", "bob", "cy", "dee"} {
		judge(name, "", []string{P, Y, V})
	}
	judge("sponsor", "T", []string{Y, V, P})

	type entry struct {
		ID          string   `json:"id"`
		TrackStars  *int     `json:"track_stars"`
		TrackRating *float64 `json:"track_rating"`
		PTrack      *float64 `json:"p_track"`
	}
	var res struct {
		Projects []entry            `json:"projects"`
		Tracks   map[string][]entry `json:"tracks"`
	}
	ids := func(es []entry) (out []string) {
		for _, e := range es {
			out = append(out, e.ID)
		}
		return out
	}
	deadline := time.Now().Add(15 * time.Second)
	for {
		ts.must(200, "GET", "/api/admin/results", nil, asAdmin, &res)
		tr := res.Tracks["T"]
		fitted := len(tr) == 3 && tr[0].TrackRating != nil && *tr[0].TrackRating != 0
		if fitted && slices.Equal(ids(res.Projects), []string{P, Y, V}) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no fit of the track within 15 s: %+v", res)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if got := ids(res.Tracks["T"]); !slices.Equal(got, []string{Y, V, P}) {
		t.Fatalf("track list %v, want the track judge's Y V P %v", got, []string{Y, V, P})
	}
	for _, e := range res.Tracks["T"] {
		if e.TrackStars == nil || e.PTrack == nil || *e.PTrack <= 0 || *e.PTrack > 1 {
			t.Fatalf("track entry %+v lacks track_stars or p_track", e)
		}
	}
}
