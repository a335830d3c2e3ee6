package engine

import (
	"strings"
)

// Prizes (docs/behaviour.md#after-judging): the organiser lists them; each is decided
// among every active project (track "") or among one track's projects, with 1–10
// places.

func init() {
	register(func() Command { return &SetPrizes{} })
}

// MaxPrizes is how many prizes an event may list.
const MaxPrizes = 100

// Prize is one prize of the event.
type Prize struct {
	ID     ID     `json:"id"`
	Name   string `json:"name"`
	Track  string `json:"track"` // "" overall, else one of options.tracks
	Places int    `json:"places"`
}

// PrizeInput is one prize of PUT /api/admin/prizes; ID is optional (a prize keeps its
// id by name, else by the id given).
type PrizeInput struct {
	ID     ID     `json:"id,omitzero"`
	Name   string `json:"name"`
	Track  string `json:"track"`
	Places int    `json:"places"`
}

// SetPrizes replaces the list of prizes (PUT /api/admin/prizes): all or nothing.
type SetPrizes struct {
	Prizes []PrizeInput `json:"prizes"`
}

// Kind implements Command.
func (*SetPrizes) Kind() string { return "prizes.set" }

func (cmd *SetPrizes) apply(s *State, c *Ctx) (any, error) {
	if len(cmd.Prizes) > MaxPrizes {
		return nil, invalidf("at most %d prizes", MaxPrizes)
	}
	names := map[string]bool{}
	for i, p := range cmd.Prizes {
		entry := "prize " + itoa(i+1)
		if err := checkName("name", p.Name); err != nil {
			return nil, invalidf("%s: %s", entry, err.(*Error).Msg)
		}
		key := strings.ToLower(strings.TrimSpace(p.Name))
		if names[key] {
			return nil, invalidf("%s: another prize is already named %q", entry, p.Name)
		}
		names[key] = true
		if p.Track != "" && !containsString(s.Options.Tracks, p.Track) {
			return nil, invalidf("prize %q: track %q is not one of the event's tracks", p.Name, p.Track)
		}
		if p.Places < 1 || p.Places > 10 {
			return nil, invalidf("prize %q: places must be 1 to 10", p.Name)
		}
	}
	byName := map[string]ID{}
	byID := map[ID]bool{}
	for _, p := range s.Prizes {
		byName[strings.ToLower(strings.TrimSpace(p.Name))] = p.ID
		byID[p.ID] = true
	}
	out := make([]Prize, 0, len(cmd.Prizes))
	used := map[ID]bool{}
	for _, in := range cmd.Prizes {
		id, ok := byName[strings.ToLower(strings.TrimSpace(in.Name))]
		if !ok && byID[in.ID] {
			id, ok = in.ID, true // renamed
		}
		if !ok || used[id] {
			id = c.newID()
		}
		used[id] = true
		out = append(out, Prize{ID: id, Name: strings.TrimSpace(in.Name), Track: in.Track, Places: in.Places})
	}
	s.Prizes = out
	c.logf("set the prizes: %s", prizeNames(out))
	return nil, nil
}

func prizeNames(ps []Prize) string {
	if len(ps) == 0 {
		return "none"
	}
	names := make([]string, len(ps))
	for i, p := range ps {
		names[i] = p.Name
	}
	return strings.Join(names, ", ")
}

// PrizesView is GET /api/admin/prizes.
func (s *State) PrizesView() []Prize {
	return append([]Prize{}, s.Prizes...)
}

// prizeByID finds a prize.
func (s *State) prizeByID(id ID) (Prize, bool) {
	for _, p := range s.Prizes {
		if p.ID == id {
			return p, true
		}
	}
	return Prize{}, false
}

// eligible reports whether project p may win prize pz: active, and in its track.
func eligible(pz Prize, p *Project) bool {
	return p.Active && (pz.Track == "" || containsString(p.ChallengeList, pz.Track))
}
