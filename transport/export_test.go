package transport

import (
	"archive/zip"
	"bytes"
	"encoding/csv"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode"

	"podium/engine"
)

// get fetches a path as admin and returns the response (body read) and body.
func (ts *testServer) getExport(path string) (*http.Response, []byte) {
	ts.t.Helper()
	req, err := http.NewRequest("GET", ts.URL+path, nil)
	if err != nil {
		ts.t.Fatal(err)
	}
	req.SetBasicAuth("admin", testPassword)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		ts.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		ts.t.Fatal(err)
	}
	if resp.StatusCode != 200 {
		ts.t.Fatalf("GET %s: %d %s", path, resp.StatusCode, b)
	}
	return resp, b
}

// getCSV downloads an export, checks its headers and parses it with encoding/csv.
func (ts *testServer) getCSV(path, filename string) [][]string {
	ts.t.Helper()
	resp, b := ts.getExport(path)
	if ct := resp.Header.Get("Content-Type"); ct != "text/csv; charset=utf-8" {
		ts.t.Errorf("%s Content-Type %q", path, ct)
	}
	if cd := resp.Header.Get("Content-Disposition"); cd != `attachment; filename="`+filename+`"` {
		ts.t.Errorf("%s Content-Disposition %q", path, cd)
	}
	return parseExportCSV(ts.t, b)
}

func parseExportCSV(t testing.TB, b []byte) [][]string {
	t.Helper()
	r := csv.NewReader(bytes.NewReader(b))
	r.FieldsPerRecord = 0 // every row as long as the header
	rows, err := r.ReadAll()
	if err != nil {
		t.Fatalf("export is not valid CSV: %v\n%s", err, b)
	}
	return rows
}

// wantExportTime is how an export writes a time (ms): RFC 3339 UTC, empty for never.
func wantExportTime(t *testing.T, cell string, ms int64) {
	t.Helper()
	if ms == 0 {
		if cell != "" {
			t.Errorf("time cell %q, want empty", cell)
		}
		return
	}
	got, err := time.Parse(time.RFC3339, cell)
	if err != nil {
		t.Errorf("time cell %q is not RFC 3339: %v", cell, err)
		return
	}
	if got.Unix() != ms/1000 || !strings.HasSuffix(cell, "Z") {
		t.Errorf("time cell %q, want %s", cell, time.UnixMilli(ms).UTC().Format(time.RFC3339))
	}
}

func sameCells(t *testing.T, what string, got, want []string) {
	t.Helper()
	if strings.Join(got, "\x00") != strings.Join(want, "\x00") {
		t.Errorf("%s:\n got  %q\n want %q", what, got, want)
	}
}

// exportFixture fills a server with judges and projects whose text needs escaping.
func exportFixture(t *testing.T) *testServer {
	ts := startServer(t)
	judges := "Name,Email,Track,Notes\n" +
		"\"=HYPERLINK(\"\"x\"\")\",hyper@example.com,,=1+1\n" +
		"Plain Judge,plain@example.com,,likes robots\n" +
		"-minus,minus@example.com,,-5 stars\n" +
		"@at,at@example.com,,+plus\n"
	var res importResult
	ts.mustUploadCSV(200, "/api/judge/csv", []byte(judges), map[string]string{"hasHeader": "1", "noSend": "1"}, &res)
	// Leading tab and carriage return survive only outside CSV imports (which trim cells).
	ts.must(200, "POST", "/api/judge/new", map[string]any{"name": "\tTab Name", "email": "tab@example.com", "notes": "\rCR notes", "no_send": true}, asAdmin, nil)
	projects := "name,description,url,try_link,video_link,challenge_list\n" +
		"\"=HYPERLINK(\"\"x\"\")\",\"-2+3\",https://a.example.com,https://try.example.com,https://youtu.be/v,\"AI, ../../etc/passwd\"\n" +
		"Second,\"multi\nline, with comma\",,,,\"ai, CON, 日本語\"\n" +
		"Third,+cmd,https://c.example.com,,,\"..\\evil\a, AI\"\n" +
		"Fourth,@mention,,,,\n"
	ts.mustUploadCSV(200, "/api/project/csv", []byte(projects), map[string]string{"hasHeader": "1"}, &res)
	return ts
}

func TestExportJudges(t *testing.T) {
	ts := exportFixture(t)
	// A login sets last_activity; the others stay "never".
	js := ts.judgeList()
	ts.login(js[1].Code)
	var list []engine.JudgeView
	ts.must(200, "GET", "/api/judge/list", nil, asAdmin, &list)

	rows := ts.getCSV("/api/admin/export/judges", "judges.csv")
	sameCells(t, "header", rows[0], []string{"Name", "Email", "Code", "Track", "Group", "Active", "ReadWelcome", "Seen", "Notes", "LastActivity", "Flagged", "Reliability", "Conflicts"})
	if len(rows) != 1+len(list) {
		t.Fatalf("%d rows for %d judges", len(rows), len(list))
	}
	wantNames := []string{`'=HYPERLINK("x")`, "Plain Judge", "'-minus", "'@at", "'\tTab Name"}
	wantNotes := []string{"'=1+1", "likes robots", "'-5 stars", "'+plus", "'CR notes"} // a lone CR is dropped by encoding/csv's CRLF writer
	for i, j := range list {
		r := rows[i+1]
		sameCells(t, "judge "+j.Name, r[:9], []string{
			wantNames[i], j.Email, j.Code, j.Track, strconv.Itoa(j.Group), strconv.FormatBool(j.Active),
			strconv.FormatBool(j.ReadWelcome), strconv.Itoa(j.Seen), wantNotes[i],
		})
		wantExportTime(t, r[9], j.LastActivity)
		if r[10] != "" { // nothing skipped yet
			t.Errorf("judge %s flagged %q, want empty", j.Name, r[10])
		}
		if r[11] != "1" { // no ratings fitted yet
			t.Errorf("judge %s reliability %q, want 1", j.Name, r[11])
		}
	}
	if list[1].LastActivity == 0 || rows[2][9] == "" {
		t.Errorf("logged-in judge has no last activity: %d %q", list[1].LastActivity, rows[2][9])
	}
}

func TestExportProjects(t *testing.T) {
	ts := exportFixture(t)
	list := ts.projectList()
	rows := ts.getCSV("/api/admin/export/projects", "projects.csv")
	sameCells(t, "header", rows[0], []string{"Name", "Table", "Group", "Description", "URL", "TryLink", "VideoLink", "ChallengeList", "Seen", "Score", "Stars", "Mu", "Active", "Prioritized", "LastActivity", "Rank", "Rating", "RatingSD", "PTop"})
	if len(rows) != 1+len(list) {
		t.Fatalf("%d rows for %d projects", len(rows), len(list))
	}
	want := []struct{ name, desc, challenges string }{
		{`'=HYPERLINK("x")`, "'-2+3", "AI, ../../etc/passwd"},
		{"Second", "multi\nline, with comma", "ai, CON, 日本語"},
		{"Third", "'+cmd", "..\\evil\a, AI"},
		{"Fourth", "'@mention", ""},
	}
	for i, p := range list {
		r := rows[i+1]
		id, _ := engine.ParseID(p.ID)
		var mu float64
		ts.Node.Read(func(st *engine.State) { mu = st.ScoreOf(id).Mu })
		sameCells(t, "project "+p.Name, r[:14], []string{
			want[i].name, strconv.Itoa(p.Location), strconv.Itoa(p.Group), want[i].desc, p.URL, p.TryLink, p.VideoLink,
			want[i].challenges, strconv.Itoa(p.Seen), strconv.Itoa(p.Score), strconv.Itoa(p.Stars),
			strconv.FormatFloat(mu, 'f', -1, 64), strconv.FormatBool(p.Active), strconv.FormatBool(p.Prioritized),
		})
		if _, err := strconv.ParseFloat(r[11], 64); err != nil {
			t.Errorf("Mu %q is not a number", r[11])
		}
		wantExportTime(t, r[14], p.LastActivity)
		var pl struct {
			Rank   int     `json:"rank"`
			Rating float64 `json:"rating"`
			SD     float64 `json:"rating_sd"`
			PTop   float64 `json:"p_top"`
		}
		ts.Node.Read(func(st *engine.State) {
			v := st.AdminView(st.Projects[id])
			pl.Rank, pl.Rating, pl.SD, pl.PTop = v.Rank, v.Rating, v.RatingSD, v.PTop
		})
		sameCells(t, "project ratings "+p.Name, r[15:], []string{
			strconv.Itoa(pl.Rank), strconv.FormatFloat(pl.Rating, 'f', -1, 64),
			strconv.FormatFloat(pl.SD, 'f', -1, 64), strconv.FormatFloat(pl.PTop, 'f', -1, 64),
		})
	}
}

func TestExportRankings(t *testing.T) {
	ts := exportFixture(t)
	list := ts.judgeList()
	rows := ts.getCSV("/api/admin/export/rankings", "rankings.csv")
	sameCells(t, "header", rows[0], []string{"JudgeName", "JudgeCode", "Track", "Ranked", "Unranked"})
	if len(rows) != 1+len(list) {
		t.Fatalf("%d rows for %d judges", len(rows), len(list))
	}
	for i, j := range list {
		name := j.Name
		if i != 1 {
			name = "'" + name
		}
		// Nobody has judged yet: both lists are empty.
		sameCells(t, "judge "+j.Name, rows[i+1], []string{name, j.Code, j.Track, "", ""})
	}
}

// TestRankingRows checks the Ranked/Unranked columns on a state with judging data
// (the rows builder works on any state; the server test above covers the route).
func TestRankingRows(t *testing.T) {
	st := engine.NewState()
	var ids []engine.ID
	for i := 1; i <= 5; i++ {
		id := engine.ID{byte(i)}
		ids = append(ids, id)
		st.Projects[id] = &engine.Project{ID: id, Name: "P" + strconv.Itoa(i), Location: i * 10, Active: true}
	}
	seen := func(ps ...engine.ID) []engine.SeenProject {
		out := []engine.SeenProject{}
		for _, p := range ps {
			out = append(out, engine.SeenProject{ProjectID: p})
		}
		return out
	}
	gone := engine.ID{99} // a project deleted since: left out
	judges := []*engine.Judge{
		{ID: engine.ID{0, 1}, Name: "Ranker", Code: "00000001", Track: "AI",
			SeenProjects: seen(ids[0], ids[1], ids[2], ids[3]), Rankings: []engine.ID{ids[2], ids[0], gone}},
		{ID: engine.ID{0, 2}, Name: "=Lazy", Code: "00000002", SeenProjects: seen(ids[4], ids[1]), Rankings: []engine.ID{}},
		{ID: engine.ID{0, 3}, Name: "New", Code: "00000003", SeenProjects: seen(), Rankings: []engine.ID{}},
	}
	for _, j := range judges {
		st.Judges[j.ID] = j
		st.JudgeOrder = append(st.JudgeOrder, j.ID)
	}
	rows := rankingRows(st)
	want := [][]string{
		{"Ranker", "00000001", "AI", "30, 10", "20, 40"},
		{"'=Lazy", "00000002", "", "", "50, 20"},
		{"New", "00000003", "", "", ""},
	}
	if len(rows) != len(want) {
		t.Fatalf("rows %q", rows)
	}
	for i := range want {
		sameCells(t, "ranking row", rows[i], want[i])
	}
}

func TestExportChallengesZip(t *testing.T) {
	ts := exportFixture(t)
	resp, b := ts.getExport("/api/admin/export/challenges")
	if ct := resp.Header.Get("Content-Type"); ct != "application/zip" {
		t.Errorf("Content-Type %q", ct)
	}
	if cd := resp.Header.Get("Content-Disposition"); cd != `attachment; filename="challenges.zip"` {
		t.Errorf("Content-Disposition %q", cd)
	}
	zr, err := zip.NewReader(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatalf("not a zip: %v", err)
	}
	all := ts.getCSV("/api/admin/export/projects", "projects.csv")
	byName := map[string][]string{}
	for _, r := range all[1:] {
		byName[r[0]] = r
	}
	// Challenges sorted by name (byte order) and the projects in each, in table order.
	wantFiles := []struct {
		challenge string
		projects  []string
	}{
		{"../../etc/passwd", []string{`'=HYPERLINK("x")`}},
		{"..\\evil\a", []string{"Third"}},
		{"AI", []string{`'=HYPERLINK("x")`, "Third"}},
		{"CON", []string{"Second"}},
		{"ai", []string{"Second"}},
		{"日本語", []string{"Second"}},
	}
	if len(zr.File) != len(wantFiles) {
		names := []string{}
		for _, f := range zr.File {
			names = append(names, f.Name)
		}
		t.Fatalf("zip entries %q", names)
	}
	used := map[string]bool{}
	for i, f := range zr.File {
		name := f.Name
		if strings.ContainsAny(name, `/\`) || strings.Contains(name, "..") || !strings.HasSuffix(name, ".csv") ||
			strings.HasPrefix(name, ".") || strings.IndexFunc(name, unicode.IsControl) >= 0 {
			t.Errorf("unsafe entry name %q", name)
		}
		if used[strings.ToLower(name)] {
			t.Errorf("entry name %q not unique", name)
		}
		used[strings.ToLower(name)] = true
		if base := strings.ToUpper(strings.TrimSuffix(name, ".csv")); base == "CON" {
			t.Errorf("reserved Windows name %q", name)
		}
		rc, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		data, err := io.ReadAll(rc)
		rc.Close()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		rows := parseExportCSV(t, data)
		sameCells(t, name+" header", rows[0], all[0])
		if len(rows)-1 != len(wantFiles[i].projects) {
			t.Errorf("%s (%s): %d projects, want %d", name, wantFiles[i].challenge, len(rows)-1, len(wantFiles[i].projects))
			continue
		}
		for k, p := range wantFiles[i].projects {
			sameCells(t, name+" row", rows[k+1], byName[p])
		}
	}
	if zr.File[0].Name != "_etc_passwd.csv" || zr.File[1].Name != "_evil_.csv" || zr.File[3].Name != "_CON.csv" || zr.File[4].Name != "ai (2).csv" {
		t.Errorf("entry names %q %q %q %q", zr.File[0].Name, zr.File[1].Name, zr.File[3].Name, zr.File[4].Name)
	}
}

func TestZipEntryNames(t *testing.T) {
	cases := map[string]string{
		"../../etc/passwd":       "_etc_passwd",
		"AI":                     "AI",
		"Best A.I. Hack":         "Best A.I. Hack",
		"a/b\\c":                 "a_b_c",
		"...":                    "_",
		"":                       "challenge",
		"CON":                    "_CON",
		"nul.txt":                "_nul.txt",
		"x\x00y\ny":              "x_y_y",
		"Sponsor: Cloud <3> *?|": "Sponsor_ Cloud _3_ _",
		"日本語":                    "日本語",
		".hidden":                "hidden",
		strings.Repeat("a", 150): strings.Repeat("a", 100),
	}
	for in, want := range cases {
		if got := zipEntryName(in); got != want {
			t.Errorf("zipEntryName(%q) = %q, want %q", in, got, want)
		}
	}
	used := map[string]bool{}
	got := []string{uniqueName("AI", used), uniqueName("ai", used), uniqueName("AI", used)}
	sameCells(t, "unique names", got, []string{"AI.csv", "ai (2).csv", "AI (3).csv"})
}
