package transport

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// upload posts a multipart form with the file in field "csv" plus the given fields.
func (ts *testServer) uploadCSV(path string, file []byte, fields map[string]string, a auth) (int, []byte) {
	ts.t.Helper()
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	for k, v := range fields {
		if err := mw.WriteField(k, v); err != nil {
			ts.t.Fatal(err)
		}
	}
	if file != nil {
		fw, err := mw.CreateFormFile("csv", "upload.csv")
		if err != nil {
			ts.t.Fatal(err)
		}
		if _, err := fw.Write(file); err != nil {
			ts.t.Fatal(err)
		}
	}
	if err := mw.Close(); err != nil {
		ts.t.Fatal(err)
	}
	req, err := http.NewRequest("POST", ts.URL+path, &body)
	if err != nil {
		ts.t.Fatal(err)
	}
	req.Header.Set("Content-Type", mw.FormDataContentType())
	if a.admin {
		req.SetBasicAuth("admin", testPassword)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		ts.t.Fatalf("POST %s: %v", path, err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, out
}

// mustUploadCSV uploads and fails unless the status is want; it decodes the answer.
func (ts *testServer) mustUploadCSV(want int, path string, file []byte, fields map[string]string, out any) []byte {
	ts.t.Helper()
	code, b := ts.uploadCSV(path, file, fields, asAdmin)
	if code != want {
		ts.t.Fatalf("POST %s: status %d, want %d; body %s", path, code, want, b)
	}
	if out != nil {
		if err := json.Unmarshal(b, out); err != nil {
			ts.t.Fatalf("decode %s: %v", b, err)
		}
	}
	return b
}

// errorText returns the "error" of a JSON error body ("" if there is none).
func errorText(b []byte) string {
	var e struct{ Error string }
	_ = json.Unmarshal(b, &e)
	return e.Error
}

func csvFixture(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

type importResult struct {
	OK      int  `json:"ok"`
	Added   int  `json:"added"`
	Skipped *int `json:"skipped"`
}

type listedJudge struct {
	ID     string `json:"id"`
	Code   string `json:"code"`
	Name   string `json:"name"`
	Email  string `json:"email"`
	Track  string `json:"track"`
	Notes  string `json:"notes"`
	Group  int    `json:"group"`
	Active bool   `json:"active"`
}

type listedProject struct {
	ID            string   `json:"id"`
	Name          string   `json:"name"`
	Location      int      `json:"location"`
	Description   string   `json:"description"`
	URL           string   `json:"url"`
	TryLink       string   `json:"try_link"`
	VideoLink     string   `json:"video_link"`
	ChallengeList []string `json:"challenge_list"`
	Seen          int      `json:"seen"`
	Score         int      `json:"score"`
	Stars         int      `json:"stars"`
	Active        bool     `json:"active"`
	Prioritized   bool     `json:"prioritized"`
	Group         int      `json:"group"`
	LastActivity  int64    `json:"last_activity"`
}

func (ts *testServer) judgeList() []listedJudge {
	ts.t.Helper()
	var out []listedJudge
	ts.must(200, "GET", "/api/judge/list", nil, asAdmin, &out)
	return out
}

func (ts *testServer) projectList() []listedProject {
	ts.t.Helper()
	var out []listedProject
	ts.must(200, "GET", "/api/project/list", nil, asAdmin, &out)
	return out
}

func TestImportJudgesCSV(t *testing.T) {
	ts := startServer(t)
	var res importResult
	ts.mustUploadCSV(200, "/api/judge/csv", csvFixture(t, "judges.csv"), map[string]string{"hasHeader": "TRUE", "noSend": "1"}, &res)
	if res.OK != 1 || res.Added != 4 {
		t.Fatalf("result %+v", res)
	}
	js := ts.judgeList()
	want := []listedJudge{
		{Name: "Ada Lovelace", Email: "ada@example.com", Notes: `Prefers hardware, "analytical" projects`},
		{Name: "Grace Hopper", Email: "grace@example.com"},
		{Name: "Zoë Ærøskøbing", Email: "zoe@example.com", Notes: "Speaks Danish, English"},
		{Name: "Alan Turing", Email: "alan@example.com"},
	}
	if len(js) != len(want) {
		t.Fatalf("got %d judges: %+v", len(js), js)
	}
	groups := map[int]int{}
	codes := map[string]bool{}
	for i, w := range want {
		j := js[i]
		if j.Name != w.Name || j.Email != w.Email || j.Notes != w.Notes || j.Track != "" || !j.Active {
			t.Errorf("judge %d = %+v, want %+v", i, j, w)
		}
		if len(j.Code) != 8 || codes[j.Code] {
			t.Errorf("judge %d code %q", i, j.Code)
		}
		codes[j.Code] = true
		groups[j.Group]++
	}
	// Four general judges over three groups: balanced means sizes 2,1,1.
	if len(groups) != 3 || groups[0] != 2 || groups[1] != 1 || groups[2] != 1 {
		t.Errorf("groups not balanced: %v", groups)
	}
	// A header-less file with a blank line in the middle.
	ts.mustUploadCSV(200, "/api/judge/csv", csvFixture(t, "judges_noheader.csv"), map[string]string{"noSend": "true"}, &res)
	if res.Added != 2 {
		t.Fatalf("no-header import added %d", res.Added)
	}
	js = ts.judgeList()
	if len(js) != 6 || js[4].Name != "Linus Torvalds" || js[5].Name != "Margaret Hamilton" || js[5].Notes != "Apollo" {
		t.Fatalf("judges after second import: %+v", js)
	}
	// The same file again: every email exists; the first row is named, nothing added.
	code, b := ts.uploadCSV("/api/judge/csv", csvFixture(t, "judges_noheader.csv"), map[string]string{"noSend": "1"}, asAdmin)
	if code != 400 || !strings.Contains(string(b), "row 1:") || !strings.Contains(string(b), "linus@example.com") {
		t.Fatalf("duplicate import: %d %s", code, b)
	}
	if n := len(ts.judgeList()); n != 6 {
		t.Fatalf("duplicate import changed the judges: %d", n)
	}
}

func TestImportJudgesBadRowIsAtomic(t *testing.T) {
	ts := startServer(t)
	cases := []struct {
		name, file, header, want string
	}{
		{"bad email", "name,email\nOne,one@example.com\nTwo,two@example.com\nThree,three-at-example.com\nFour,four@example.com\n", "1", "row 4: email"},
		{"too few columns", "One,one@example.com\nTwo\n", "0", "row 2: expected at least 2 columns"},
		{"empty name", "a,b\n,x@example.com\n", "true", "row 2: name is required"},
		{"unknown track", "A,a@example.com,NoSuchTrack\n", "", "row 1: track \"NoSuchTrack\" does not exist"},
		{"duplicate in file", "A,a@example.com\nB,b@example.com\nC,A@Example.com\n", "", "row 3: email A@Example.com is also in row 1"},
		{"bad quotes", "A,a@example.com\nB,\"b@example.com\nC,c@example.com\n", "", "row 2, column 2 (B): this cell opens a quote mark"},
		{"not utf-8", "A,a@example.com\nB\xe9,b@example.com\n", "", "row 2: the file is not valid UTF-8"},
		{"header only", "name,email\n", "1", "no data rows"},
		{"empty", "", "", "no data rows"},
		{"header without hasHeader", "Name,Email\nA,a@example.com\n", "false", `row 1: email "Email" is not a valid address (if row 1 is a header row, upload with hasHeader=true)`},
		{"long name", "A,a@example.com\n" + strings.Repeat("x", 201) + ",b@example.com\n", "", "row 2: name is longer"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			code, b := ts.uploadCSV("/api/judge/csv", []byte(tc.file), map[string]string{"hasHeader": tc.header, "noSend": "1"}, asAdmin)
			if code != 400 || !strings.Contains(errorText(b), tc.want) {
				t.Fatalf("status %d body %s, want 400 containing %q", code, b, tc.want)
			}
			if n := len(ts.judgeList()); n != 0 {
				t.Fatalf("a refused import added %d judges", n)
			}
		})
	}
	// The fixture file names the right row too.
	code, b := ts.uploadCSV("/api/judge/csv", csvFixture(t, "judges_bad_email.csv"), map[string]string{"hasHeader": "1"}, asAdmin)
	if code != 400 || !strings.Contains(string(b), "row 4:") {
		t.Fatalf("fixture: %d %s", code, b)
	}
}

// TestConcurrentImportsAreAtomic uploads the same judges file twice at once: both pass
// the transport checks, the engine takes one whole and refuses the other whole.
func TestConcurrentImportsAreAtomic(t *testing.T) {
	ts := startServer(t)
	var file strings.Builder
	file.WriteString("name,email\n")
	for i := 0; i < 300; i++ {
		fmt.Fprintf(&file, "Judge %d,judge%d@example.com\n", i, i)
	}
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	_ = mw.WriteField("hasHeader", "1")
	_ = mw.WriteField("noSend", "1")
	fw, _ := mw.CreateFormFile("csv", "judges.csv")
	_, _ = fw.Write([]byte(file.String()))
	_ = mw.Close()
	type result struct {
		code int
		body string
	}
	results := make(chan result, 2)
	for i := 0; i < 2; i++ {
		go func() {
			req, _ := http.NewRequest("POST", ts.URL+"/api/judge/csv", bytes.NewReader(body.Bytes()))
			req.Header.Set("Content-Type", mw.FormDataContentType())
			req.SetBasicAuth("admin", testPassword)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				results <- result{body: err.Error()}
				return
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			results <- result{resp.StatusCode, string(b)}
		}()
	}
	a, b := <-results, <-results
	if a.code > b.code {
		a, b = b, a
	}
	if a.code != 200 || b.code != 400 || !strings.Contains(errorText([]byte(b.body)), "row 2: a judge with email judge0@example.com already exists") {
		t.Fatalf("results %+v %+v", a, b)
	}
	if n := len(ts.judgeList()); n != 300 {
		t.Fatalf("%d judges, want 300", n)
	}
}

func TestImportUploadErrors(t *testing.T) {
	ts := startServer(t)
	for _, path := range []string{"/api/judge/csv", "/api/project/csv", "/api/project/submissions", "/api/project/devpost"} {
		// Not an admin.
		if code, _ := ts.uploadCSV(path, []byte("a,b@c.de\n"), nil, anon); code != 401 {
			t.Errorf("%s anonymous: %d", path, code)
		}
		// No file.
		code, b := ts.uploadCSV(path, nil, map[string]string{"hasHeader": "1"}, asAdmin)
		if code != 400 || !strings.Contains(errorText(b), `"csv"`) {
			t.Errorf("%s without file: %d %s", path, code, b)
		}
		// Not multipart at all.
		code, b = ts.do("POST", path, map[string]string{"csv": "x"}, asAdmin)
		if code != 400 || !strings.Contains(string(b), "multipart") {
			t.Errorf("%s JSON body: %d %s", path, code, b)
		}
	}
}

func TestImportProjectsCSV(t *testing.T) {
	ts := startServer(t)
	ts.addProject("Existing", "")
	var res importResult
	ts.mustUploadCSV(200, "/api/project/csv", csvFixture(t, "projects.csv"), map[string]string{"hasHeader": "true"}, &res)
	if res.Added != 4 || res.Skipped == nil || *res.Skipped != 0 {
		t.Fatalf("result %+v", res)
	}
	ps := ts.projectList()
	if len(ps) != 5 {
		t.Fatalf("projects: %+v", ps)
	}
	r := ps[1]
	if r.Name != "Rocket" || r.Location != 2 || r.Description != "Goes up.\nComes down, \"mostly\"." ||
		r.URL != "https://rocket.example.com" || r.TryLink != "https://try.rocket.example.com" ||
		r.VideoLink != "https://youtu.be/abc" || strings.Join(r.ChallengeList, "|") != "AI|Web" || !r.Active {
		t.Errorf("Rocket = %+v", r)
	}
	for i, name := range []string{"Existing", "Rocket", "Boat", "Secret Sauce", "Minimal"} {
		if ps[i].Name != name || ps[i].Location != i+1 {
			t.Errorf("project %d = %s at %d, want %s at %d", i, ps[i].Name, ps[i].Location, name, i+1)
		}
	}
	if ps[4].Description != "Only three columns." || len(ps[4].ChallengeList) != 0 {
		t.Errorf("Minimal = %+v", ps[4])
	}
	// Errors name the row; nothing is added.
	cases := []struct{ file, header, want string }{
		{"name,description,url\nA,d,https://a.example.com\nB,d,javascript:alert(1)\n", "1", "row 3: url must be"},
		{"A,d,https://a.example.com\n\"B\nmulti\",d,https://b.example.com\n,d,\n", "0", "row 3: name is required"},
		{"A,d\n", "", "row 1: expected at least 3 columns"},
		{"A,d,,ftp://x.example.com\n", "1x", "row 1: try_link must be"},
		{"name,description,url\nA,d,https://a.example.com\n", "", "row 1: url must be empty or an absolute http(s) URL (if row 1 is a header row, upload with hasHeader=true)"},
	}
	for _, tc := range cases {
		code, b := ts.uploadCSV("/api/project/csv", []byte(tc.file), map[string]string{"hasHeader": tc.header}, asAdmin)
		if code != 400 || !strings.Contains(string(b), tc.want) {
			t.Errorf("status %d body %s, want 400 containing %q", code, b, tc.want)
		}
	}
	if n := len(ts.projectList()); n != 5 {
		t.Fatalf("refused imports changed the projects: %d", n)
	}
}

func TestImportSubmissions(t *testing.T) {
	ts := startServer(t)
	var res importResult
	ts.mustUploadCSV(200, "/api/project/submissions", csvFixture(t, "submissions.csv"), nil, &res)
	if res.Added != 4 || res.Skipped == nil || *res.Skipped != 2 {
		t.Fatalf("result %+v", res)
	}
	ps := ts.projectList()
	if len(ps) != 4 {
		t.Fatalf("projects %+v", ps)
	}
	bike := ps[0]
	if bike.Name != "BikeFinder" || bike.Location != 1 ||
		bike.Description != "## Inspiration\nWe wanted to help people find \"lost\" bikes.\n\n## What it does\nIt scans, matches, and notifies — in real time." ||
		bike.URL != "https://expo.example.com/software/bikefinder" ||
		bike.TryLink != "https://bikefinder.example.com" ||
		bike.VideoLink != "https://www.youtube.com/watch?v=dQw4w9WgXcQ" ||
		strings.Join(bike.ChallengeList, "|") != "Best Hardware Hack|Best Use of AI" {
		t.Errorf("BikeFinder = %+v", bike)
	}
	bot := ps[1]
	if bot.Name != "Bonjour Bot" || bot.Description != "Café-ordering bot 🤖 that speaks Français, Deutsch & 日本語." ||
		bot.TryLink != "https://github.com/example/bonjour-bot" || bot.VideoLink != "" {
		t.Errorf("Bonjour Bot = %+v", bot)
	}
	apollo := ps[2]
	if apollo.Name != "Apollo Guidance" || apollo.Description != "Flight software, \"tested\" thoroughly.\n\nMulti-paragraph\n\n\nwith blank lines inside the quotes." ||
		apollo.VideoLink != "https://vimeo.com/123456" || apollo.TryLink != "" {
		t.Errorf("Apollo = %+v", apollo)
	}
	if ps[3].Name != "Widget Swap" || strings.Join(ps[3].ChallengeList, "|") != "Sponsor Prize: Cloud" {
		t.Errorf("Widget Swap = %+v", ps[3])
	}
	// The public listing shows them too.
	var pub []listedProject
	ts.must(200, "GET", "/api/project/list/public", nil, anon, &pub)
	if len(pub) != 4 {
		t.Errorf("public list has %d projects", len(pub))
	}
	// The alias route imports the same file again (new tables 5..8).
	ts.mustUploadCSV(200, "/api/project/devpost", csvFixture(t, "submissions.csv"), map[string]string{"hasHeader": "false"}, &res)
	if res.Added != 4 || ts.projectList()[7].Location != 8 {
		t.Fatalf("alias import: %+v", res)
	}
}

func TestImportSubmissionsErrors(t *testing.T) {
	ts := startServer(t)
	code, b := ts.uploadCSV("/api/project/submissions", csvFixture(t, "submissions_no_title.csv"), nil, asAdmin)
	if code != 400 || !strings.Contains(string(b), "Project Title") {
		t.Fatalf("no title column: %d %s", code, b)
	}
	// Row 2 spans three lines, row 3 is a Draft with a bad URL (skipped), row 4 is bad.
	code, b = ts.uploadCSV("/api/project/submissions", csvFixture(t, "submissions_bad_row.csv"), nil, asAdmin)
	if code != 400 || !strings.Contains(string(b), "row 4: url must be") {
		t.Fatalf("bad row: %d %s", code, b)
	}
	code, b = ts.uploadCSV("/api/project/submissions", []byte("Project Title,Project Status\n\"unterminated,Submitted\n"), nil, asAdmin)
	if code != 400 || !strings.Contains(errorText(b), "row 2, column 1 (A): this cell opens a quote mark") {
		t.Fatalf("bad quotes: %d %s", code, b)
	}
	if n := len(ts.projectList()); n != 0 {
		t.Fatalf("refused imports added %d projects", n)
	}
	// Only drafts: nothing to add, the drafts are counted.
	var res importResult
	ts.mustUploadCSV(200, "/api/project/submissions", []byte("Project Title,Project Status\nA,Draft\nB,Draft\n"), nil, &res)
	if res.Added != 0 || res.Skipped == nil || *res.Skipped != 2 {
		t.Fatalf("drafts only: %+v", res)
	}
}

func TestCSVRowNumbers(t *testing.T) {
	data := "a,b\r\n\r\n\"multi\r\nline\",x\r\n\r\n\r\nlast,y"
	rows, err := readCSV([]byte("\xef\xbb\xbf" + data))
	if err != nil {
		t.Fatal(err)
	}
	want := []int{1, 3, 6}
	if len(rows) != len(want) {
		t.Fatalf("rows %+v", rows)
	}
	for i, r := range rows {
		if r.num != want[i] {
			t.Errorf("row %d numbered %d, want %d", i, r.num, want[i])
		}
	}
	if rows[0].cells[0] != "a" || rows[1].cells[0] != "multi\nline" || rows[2].cells[1] != "y" {
		t.Errorf("cells %+v", rows)
	}
}

func TestCSVDelimiters(t *testing.T) {
	cases := map[string][]string{
		"a,b;c\n":                {"a", "b;c"},
		"a;b;\"c,d\"\n":          {"a", "b", "c,d"},
		"a\tb\tc\n":              {"a", "b", "c"},
		"\"x,y\";z\n":            {"x,y", "z"},
		"single\na;b\n":          {"single"},
		"name;email\r\nA;a@b.co": {"name", "email"},
	}
	for in, want := range cases {
		rows, err := readCSV([]byte(in))
		if err != nil {
			t.Fatalf("%q: %v", in, err)
		}
		if strings.Join(rows[0].cells, "|") != strings.Join(want, "|") {
			t.Errorf("%q: first row %q, want %q", in, rows[0].cells, want)
		}
	}
	// A semicolon-separated judges file from a spreadsheet in a decimal-comma locale.
	ts := startServer(t)
	var res importResult
	ts.mustUploadCSV(200, "/api/judge/csv", []byte("Name;Email;Track;Notes\r\nAnna;anna@example.com;;likes 3,5 inch floppies\r\n"), map[string]string{"hasHeader": "1", "noSend": "1"}, &res)
	if js := ts.judgeList(); res.Added != 1 || js[0].Name != "Anna" || js[0].Notes != "likes 3,5 inch floppies" {
		t.Fatalf("semicolon import: %+v %+v", res, js)
	}
}

func TestImportCSVFirstLink(t *testing.T) {
	if got := csvFirstLink("https://a.example.com, https://b.example.com"); got != "https://a.example.com" {
		t.Errorf("csvFirstLink = %q", got)
	}
	if got := csvFirstLink("\n https://a.example.com\nhttps://b"); got != "https://a.example.com" {
		t.Errorf("csvFirstLink = %q", got)
	}
}
