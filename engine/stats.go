package engine

// AdminStats is the body of GET /api/admin/stats and /api/admin/stats/:track.
type AdminStats struct {
	Projects       int `json:"projects"`
	AvgProjectSeen int `json:"avg_project_seen"`
	AvgJudgeSeen   int `json:"avg_judge_seen"`
	Judges         int `json:"judges"`
}

// AdminStats computes the statistics over active projects and active general judges,
// or, for a track, over the active projects whose challenge list contains the track
// (their views by that track's judges) and the track's active judges. Averages are
// rounded to the nearest integer (halves up).
func (s *State) AdminStats(track string) AdminStats {
	var st AdminStats
	projSeen, judgeSeen := 0, 0
	for _, p := range s.Projects {
		if !p.Active {
			continue
		}
		if track == "" {
			st.Projects++
			projSeen += p.Seen
		} else if containsString(p.ChallengeList, track) {
			st.Projects++
			projSeen += p.TrackSeen[track]
		}
	}
	for _, j := range s.Judges {
		if !j.Active {
			continue
		}
		if (track == "" && s.IsGeneral(j)) || (track != "" && j.Track == track) {
			st.Judges++
			judgeSeen += j.Seen
		}
	}
	st.AvgProjectSeen = roundedMean(projSeen, st.Projects)
	st.AvgJudgeSeen = roundedMean(judgeSeen, st.Judges)
	return st
}

// roundedMean returns sum/n rounded to the nearest integer (halves up); 0 when n is 0.
// Sums are never negative.
func roundedMean(sum, n int) int {
	if n <= 0 {
		return 0
	}
	return (2*sum + n) / (2 * n)
}
