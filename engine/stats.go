package engine

// AdminStats is the body of GET /api/admin/stats and /api/admin/stats/:track.
type AdminStats struct {
	Projects       int `json:"projects"`
	AvgProjectSeen int `json:"avg_project_seen"`
	AvgJudgeSeen   int `json:"avg_judge_seen"`
	Judges         int `json:"judges"`
}

// AdminStats computes the statistics over active projects and active general judges,
// or, for a track, over the track's projects and judges. (Filled in with the admin
// routes.)
func (s *State) AdminStats(track string) AdminStats { return AdminStats{} }
