package engine

import (
	"math"
	"strings"
)

// Winners (docs/behaviour.md#after-judging): Podium proposes an order per prize, the
// organiser publishes final lists (which may differ; each difference is audit-logged),
// and publishing or taking back announces it to every screen at once.

func init() {
	register(
		func() Command { return &PublishWinners{} },
		func() Command { return &TakeBackWinners{} },
	)
}

// Outcome is what the organiser published.
type Outcome struct {
	At       int64       `json:"at"`       // ms
	Feedback bool        `json:"feedback"` // teams may read their judges' feedback
	Lists    []PrizeList `json:"lists"`
}

// PrizeList is one prize's winners, best first.
type PrizeList struct {
	Prize   ID   `json:"prize"`
	Winners []ID `json:"winners"`
}

func (o *Outcome) clone() *Outcome {
	if o == nil {
		return nil
	}
	c := *o
	c.Lists = make([]PrizeList, len(o.Lists))
	for i, l := range o.Lists {
		c.Lists[i] = PrizeList{Prize: l.Prize, Winners: cloneSlice(l.Winners)}
	}
	return &c
}

// winnersOf returns the published winners of prize id (nil when none).
func (o *Outcome) winnersOf(id ID) []ID {
	if o == nil {
		return nil
	}
	for _, l := range o.Lists {
		if l.Prize == id {
			return l.Winners
		}
	}
	return nil
}

// WinnersChangedAt is the version of the public winners: it changes when winners are
// published or taken back and whenever the public project listing changes (a winner
// renamed, moved or hidden). Caches of the encoded winners key on it.
// Publishing and taking back bump the public listing's version too (a cache rebuild
// of the listing is cheap next to keeping two versions).
func (s *State) WinnersChangedAt() uint64 { return s.publicAt }

// PublishWinners publishes the organiser's final lists (POST
// /api/admin/winners/publish); publishing again replaces them.
type PublishWinners struct {
	Lists    []PrizeList `json:"lists"`
	Feedback bool        `json:"feedback"`
}

// Kind implements Command.
func (*PublishWinners) Kind() string { return "winners.publish" }

func (cmd *PublishWinners) apply(s *State, c *Ctx) (any, error) {
	if len(s.Prizes) == 0 {
		return nil, conflictf("there are no prizes: list them in Settings first")
	}
	given := map[ID]bool{}
	for _, l := range cmd.Lists {
		pz, ok := s.prizeByID(l.Prize)
		if !ok {
			return nil, invalidf("unknown prize %s", l.Prize)
		}
		if given[l.Prize] {
			return nil, invalidf("prize %q is listed twice", pz.Name)
		}
		given[l.Prize] = true
		if len(l.Winners) > pz.Places {
			return nil, invalidf("prize %q has %d places, %d winners given", pz.Name, pz.Places, len(l.Winners))
		}
		var bad []string
		for i, id := range l.Winners {
			p, ok := s.Projects[id]
			switch {
			case !ok:
				bad = append(bad, "unknown project "+id.String())
			case !p.Active:
				bad = append(bad, "project "+p.Name+" is hidden")
			case pz.Track != "" && !containsString(p.ChallengeList, pz.Track):
				bad = append(bad, "project "+p.Name+" is not in track "+pz.Track)
			case containsID(l.Winners[:i], id):
				bad = append(bad, "project "+p.Name+" is listed twice")
			}
		}
		if len(bad) > 0 {
			return nil, invalidf("prize %q: %s", pz.Name, strings.Join(bad, "; "))
		}
	}
	o := &Outcome{At: c.Time, Feedback: cmd.Feedback}
	for _, pz := range s.Prizes { // in the prizes' order, every prize present
		l := PrizeList{Prize: pz.ID, Winners: []ID{}}
		for _, g := range cmd.Lists {
			if g.Prize == pz.ID {
				l.Winners = append(l.Winners, g.Winners...)
			}
		}
		o.Lists = append(o.Lists, l)
		s.logDifferences(c, pz, l.Winners)
	}
	s.Outcome = o
	s.publicAt++
	share := "without feedback"
	if o.Feedback {
		share = "with feedback for the teams"
	}
	c.logf("published the winners (%s)", share)
	c.emit(Event{Type: EvWinners, To: ToEveryone, Data: s.PublicWinners()})
	return nil, nil
}

// logDifferences writes an audit line for every place where the published list
// differs from Podium's proposal.
func (s *State) logDifferences(c *Ctx, pz Prize, winners []ID) {
	proposal := s.PrizeOrder(pz.Track, pz.Places)
	name := func(id ID) string {
		if p, ok := s.Projects[id]; ok {
			return p.Name + " (table " + itoa(p.Location) + ")"
		}
		return id.String()
	}
	for i := 0; i < pz.Places; i++ {
		var got, want ID
		if i < len(winners) {
			got = winners[i]
		}
		if i < len(proposal) {
			want = proposal[i].ID
		}
		switch {
		case got == want:
		case got.IsZero():
			c.logf("prize %s, place %d: left empty (Podium proposed %s)", pz.Name, i+1, name(want))
		case want.IsZero():
			c.logf("prize %s, place %d: %s", pz.Name, i+1, name(got))
		default:
			c.logf("prize %s, place %d: %s instead of the proposed %s", pz.Name, i+1, name(got), name(want))
		}
	}
}

// TakeBackWinners withdraws the published winners (DELETE /api/admin/winners/publish).
type TakeBackWinners struct{}

// Kind implements Command.
func (*TakeBackWinners) Kind() string { return "winners.take_back" }

func (cmd *TakeBackWinners) apply(s *State, c *Ctx) (any, error) {
	if s.Outcome == nil {
		return nil, conflictf("no winners are published")
	}
	s.Outcome = nil
	s.publicAt++
	c.logf("took the published winners back")
	c.emit(Event{Type: EvWinners, To: ToEveryone, Data: s.PublicWinners()})
	return nil, nil
}

// PublicWinner is one place of a prize as screens show it.
type PublicWinner struct {
	Place    int    `json:"place"`
	Name     string `json:"name"`
	Location int    `json:"location"`
	URL      string `json:"url"`
}

// PublicPrize is one prize with its winners as screens show it.
type PublicPrize struct {
	Name    string         `json:"name"`
	Track   string         `json:"track"`
	Winners []PublicWinner `json:"winners"`
}

// PublicWinnersView is the "winners" websocket event and GET /api/winners: empty
// before publishing. A winner hidden or deleted since is left out.
type PublicWinnersView struct {
	Published bool          `json:"published"`
	Prizes    []PublicPrize `json:"prizes"`
}

// PublicWinners builds the public winners.
func (s *State) PublicWinners() PublicWinnersView {
	out := PublicWinnersView{Published: s.Outcome != nil, Prizes: []PublicPrize{}}
	if s.Outcome == nil {
		return out
	}
	for _, pz := range s.Prizes {
		pp := PublicPrize{Name: pz.Name, Track: pz.Track, Winners: []PublicWinner{}}
		for i, id := range s.Outcome.winnersOf(pz.ID) {
			if p, ok := s.Projects[id]; ok && p.Active {
				pp.Winners = append(pp.Winners, PublicWinner{Place: i + 1, Name: p.Name, Location: p.Location, URL: p.URL})
			}
		}
		out.Prizes = append(out.Prizes, pp)
	}
	return out
}

// WinnerRecord is one entry of GET /v1/public/winners.
type WinnerRecord struct {
	Prize   string        `json:"prize"`
	Track   string        `json:"track"`
	Place   int           `json:"place"`
	Project WinnerProject `json:"project"`
}

// WinnerProject is the project of a WinnerRecord.
type WinnerProject struct {
	Name          string   `json:"name"`
	Location      int      `json:"location"`
	URL           string   `json:"url"`
	ChallengeList []string `json:"challenge_list"`
}

// WinnerRecords lists the published winners for the website, prize by prize, place by
// place; empty before publishing.
func (s *State) WinnerRecords() []WinnerRecord {
	out := []WinnerRecord{}
	if s.Outcome == nil {
		return out
	}
	for _, pz := range s.Prizes {
		for i, id := range s.Outcome.winnersOf(pz.ID) {
			if p, ok := s.Projects[id]; ok && p.Active {
				out = append(out, WinnerRecord{Prize: pz.Name, Track: pz.Track, Place: i + 1, Project: WinnerProject{
					Name: p.Name, Location: p.Location, URL: p.URL, ChallengeList: append([]string{}, p.ChallengeList...)}})
			}
		}
	}
	return out
}

// ProposedEntry is one project of a prize's proposal.
type ProposedEntry struct {
	ID       ID      `json:"id"`
	Name     string  `json:"name"`
	Location int     `json:"location"`
	P        float64 `json:"p"`
}

// WinnerEntry is one published winner in the admin's view.
type WinnerEntry struct {
	ID       ID     `json:"id"`
	Name     string `json:"name"`
	Location int    `json:"location"`
}

// PrizeWinnersView is one prize of GET /api/admin/winners.
type PrizeWinnersView struct {
	Prize
	// A track prize's evidence: the track's active track judges and their views per
	// active project of the track (docs/behaviour.md#track-prizes: under about three
	// views per project the proposed order is a shortlist).
	TrackJudges *int            `json:"track_judges,omitempty"`
	TrackViews  *float64        `json:"track_views,omitempty"`
	Proposed    []ProposedEntry `json:"proposed"`
	Winners     []WinnerEntry   `json:"winners"`
}

// WinnersView is GET /api/admin/winners.
type WinnersView struct {
	Published   bool               `json:"published"`
	PublishedAt int64              `json:"published_at"`
	Feedback    bool               `json:"feedback"`
	Prizes      []PrizeWinnersView `json:"prizes"`
}

// proposalExtra is how many projects a proposal lists beyond the prize's places.
const proposalExtra = 3

// Winners builds the admin's view: per prize the proposal and the published list.
func (s *State) Winners() WinnersView {
	out := WinnersView{Published: s.Outcome != nil, Prizes: []PrizeWinnersView{}}
	if s.Outcome != nil {
		out.PublishedAt, out.Feedback = s.Outcome.At, s.Outcome.Feedback
	}
	for _, pz := range s.Prizes {
		v := PrizeWinnersView{Prize: pz, Proposed: []ProposedEntry{}, Winners: []WinnerEntry{}}
		if pz.Track != "" {
			judges, views := s.trackEvidence(pz.Track)
			v.TrackJudges, v.TrackViews = &judges, &views
		}
		for i, st := range s.PrizeOrder(pz.Track, pz.Places) {
			if i >= pz.Places+proposalExtra {
				break
			}
			p := s.Projects[st.ID]
			v.Proposed = append(v.Proposed, ProposedEntry{ID: p.ID, Name: p.Name, Location: p.Location, P: st.P})
		}
		for _, id := range s.Outcome.winnersOf(pz.ID) {
			if p, ok := s.Projects[id]; ok {
				v.Winners = append(v.Winners, WinnerEntry{ID: p.ID, Name: p.Name, Location: p.Location})
			}
		}
		out.Prizes = append(out.Prizes, v)
	}
	return out
}

// trackEvidence returns track t's active track judges and their views per active
// project of the track (two decimals; 0 without projects).
func (s *State) trackEvidence(t string) (judges int, views float64) {
	for _, j := range s.Judges {
		if j.Active && s.trackOf(j) == t {
			judges++
		}
	}
	n, seen := 0, 0
	for _, p := range s.Projects {
		if p.Active && containsString(p.ChallengeList, t) {
			n++
			seen += p.TrackSeen[t]
		}
	}
	if n > 0 {
		views = math.Round(100*float64(seen)/float64(n)) / 100
	}
	return judges, views
}
