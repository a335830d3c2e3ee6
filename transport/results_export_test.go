package transport

import (
	"strconv"
	"testing"
)

// TestExportResults: results.csv has the Results tab's columns, one row per active
// project in rank order with the same figures as GET /api/admin/results, user text
// escaped like the other exports; it is admin-only.
func TestExportResults(t *testing.T) {
	ts := exportFixture(t)
	ts.must(401, "GET", "/api/admin/results.csv", nil, anon, nil)
	list := ts.projectList()
	ts.must(200, "PUT", "/api/project/hide/"+list[1].ID, nil, asAdmin, nil) // hidden: not in the results
	ts.must(200, "POST", "/api/admin/clock/unpause", nil, asAdmin, nil)
	_, c1 := ts.addJudge("Ada", "ada@example.com", "")
	tok := ts.login(c1)
	for i := 0; i < 3; i++ {
		ts.must(200, "POST", "/api/judge/next", nil, asJudge(tok), nil)
		ts.must(200, "POST", "/api/judge/finish", map[string]any{"starred": i == 0}, asJudge(tok), nil)
	}

	var res struct {
		Projects []struct {
			Name     string  `json:"name"`
			Location int     `json:"location"`
			Rank     int     `json:"rank"`
			Rating   float64 `json:"rating"`
			RatingSD float64 `json:"rating_sd"`
			PTop     float64 `json:"p_top"`
			Score    int     `json:"score"`
			Stars    int     `json:"stars"`
			Seen     int     `json:"seen"`
		} `json:"projects"`
	}
	ts.must(200, "GET", "/api/admin/results", nil, asAdmin, &res)
	rows := ts.getCSV("/api/admin/results.csv", "results.csv")
	sameCells(t, "header", rows[0], []string{"Rank", "Name", "Table", "Rating", "RatingSD", "PTop", "Score", "Stars", "Views"})
	if len(rows) != 1+len(res.Projects) || len(res.Projects) != len(list)-1 {
		t.Fatalf("%d rows for %d results (%d projects, one hidden)", len(rows)-1, len(res.Projects), len(list))
	}
	escaped := map[string]string{`=HYPERLINK("x")`: `'=HYPERLINK("x")`}
	stars := 0
	for i, p := range res.Projects {
		name := p.Name
		if e, ok := escaped[name]; ok {
			name = e
		}
		f := func(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
		sameCells(t, "row "+p.Name, rows[i+1], []string{
			strconv.Itoa(p.Rank), name, strconv.Itoa(p.Location), f(p.Rating), f(p.RatingSD), f(p.PTop),
			strconv.Itoa(p.Score), strconv.Itoa(p.Stars), strconv.Itoa(p.Seen),
		})
		stars += p.Stars
	}
	if stars != 1 {
		t.Errorf("stars in results.csv sum to %d, want the 1 given", stars)
	}
}
