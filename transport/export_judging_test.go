package transport

import (
	"strconv"
	"strings"
	"testing"
)

// TestExportsAfterJudging judges through the real routes, then checks that the score
// columns of projects.csv match what the API reports and that rankings.csv lists each
// judge's ranking and unranked tables.
func TestExportsAfterJudging(t *testing.T) {
	ts := startServer(t)
	var res importResult
	ts.mustUploadCSV(200, "/api/project/csv", []byte("P1,d,\nP2,d,\nP3,d,\nP4,d,\n"), nil, &res)
	ts.must(200, "POST", "/api/admin/clock/unpause", nil, asAdmin, nil)
	type judge struct {
		name, code, token string
		seen              []string // project ids in judged order
	}
	judges := []*judge{{name: "Ann"}, {name: "Ben"}, {name: "Cat"}}
	for _, j := range judges {
		_, j.code = ts.addJudge(j.name, strings.ToLower(j.name)+"@example.com", "")
		j.token = ts.login(j.code)
	}
	for round := 0; round < 3; round++ {
		for k, j := range judges {
			var next struct {
				ProjectID string `json:"project_id"`
			}
			ts.must(200, "POST", "/api/judge/next", nil, asJudge(j.token), &next)
			if next.ProjectID == "" {
				t.Fatalf("%s got no project in round %d", j.name, round)
			}
			ts.must(200, "POST", "/api/judge/finish", map[string]any{"notes": "", "starred": (round+k)%2 == 0}, asJudge(j.token), nil)
			j.seen = append(j.seen, next.ProjectID)
		}
	}
	// Ann ranks two of three (best first), Ben all three reversed, Cat nothing.
	ts.must(200, "POST", "/api/judge/rank", map[string]any{"ranking": []string{judges[0].seen[2], judges[0].seen[0]}}, asJudge(judges[0].token), nil)
	ts.must(200, "POST", "/api/judge/rank", map[string]any{"ranking": []string{judges[1].seen[2], judges[1].seen[1], judges[1].seen[0]}}, asJudge(judges[1].token), nil)

	list := ts.projectList()
	table := map[string]int{}
	nonzero := false
	for _, p := range list {
		table[p.ID] = p.Location
		nonzero = nonzero || p.Score != 0 || p.Stars != 0
	}
	if !nonzero {
		t.Fatal("judging produced no scores; the comparison below would prove nothing")
	}
	rows := ts.getCSV("/api/admin/export/projects", "projects.csv")
	for i, p := range list {
		r := rows[i+1]
		var jv struct {
			Mu float64 `json:"mu"`
		}
		ts.must(200, "GET", "/api/project/"+p.ID, nil, asJudge(judges[0].token), &jv)
		want := []string{strconv.Itoa(p.Seen), strconv.Itoa(p.Score), strconv.Itoa(p.Stars), strconv.FormatFloat(jv.Mu, 'f', -1, 64)}
		sameCells(t, "scores of "+p.Name, r[8:12], want)
	}

	tables := func(ids []string) string {
		out := []string{}
		for _, id := range ids {
			out = append(out, strconv.Itoa(table[id]))
		}
		return strings.Join(out, ", ")
	}
	rank := ts.getCSV("/api/admin/export/rankings", "rankings.csv")
	want := [][]string{
		{"Ann", judges[0].code, "", tables([]string{judges[0].seen[2], judges[0].seen[0]}), tables([]string{judges[0].seen[1]})},
		{"Ben", judges[1].code, "", tables([]string{judges[1].seen[2], judges[1].seen[1], judges[1].seen[0]}), ""},
		{"Cat", judges[2].code, "", "", tables(judges[2].seen)},
	}
	for i, w := range want {
		sameCells(t, "ranking of "+w[0], rank[i+1], w)
	}
}
