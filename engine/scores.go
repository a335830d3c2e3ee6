package engine

// Score holds a project's computed results (SPEC §6).
type Score struct {
	Score      int
	Stars      int
	TrackStars map[string]int
	Votes      int
	Mu         float64
	SigmaSq    float64
}

// ScoreOf returns the computed results of a project. (The judging issue replaces this
// with cached Copeland and Crowd-BT results.)
func (s *State) ScoreOf(id ID) Score {
	return Score{TrackStars: map[string]int{}, SigmaSq: 1}
}
