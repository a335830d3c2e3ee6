package transport

import (
	"slices"
	"strings"
	"testing"
)

// contactEmails maps each listed project's name to its contact_emails as GET
// /api/project/list shows them.
func (ts *testServer) contactEmails() map[string][]string {
	ts.t.Helper()
	var list []struct {
		Name          string   `json:"name"`
		ContactEmails []string `json:"contact_emails"`
	}
	ts.must(200, "GET", "/api/project/list", nil, asAdmin, &list)
	out := map[string][]string{}
	for _, p := range list {
		out[p.Name] = p.ContactEmails
	}
	return out
}

// TestImportProjectsCSVContactEmails: the projects CSV's contact emails come from the
// column named for them when there is a header row (anywhere after the fixed columns),
// else from the column after challenge_list; addresses are split, trimmed and
// deduplicated; a bad address is a 400 naming the row, and nothing is added.
func TestImportProjectsCSVContactEmails(t *testing.T) {
	ts := startServer(t)
	withHeader := "name,description,url,try_link,video_link,challenge_list,team size,Contact Emails\n" +
		"Rocket,d,,,,AI,4,\" ann@example.com; Bob <bob@example.com>, ANN@example.com \"\n" +
		"Boat,d,,,,,2,\n"
	ts.mustUploadCSV(200, "/api/project/csv", []byte(withHeader), map[string]string{"hasHeader": "true"}, nil)
	noHeader := "Sail,d,https://sail.example.com,,,Web,cid@example.com dee@example.com\n"
	ts.mustUploadCSV(200, "/api/project/csv", []byte(noHeader), nil, nil)
	// A header row without an email column: the seventh column is not read as emails.
	ts.mustUploadCSV(200, "/api/project/csv", []byte("name,description,url,try_link,video_link,challenge_list,team size\nKite,d,,,,,3\n"),
		map[string]string{"hasHeader": "true"}, nil)

	got := ts.contactEmails()
	want := map[string][]string{
		"Rocket": {"ann@example.com", "bob@example.com"},
		"Boat":   {},
		"Sail":   {"cid@example.com", "dee@example.com"},
		"Kite":   {},
	}
	for name, w := range want {
		if !slices.Equal(got[name], w) || got[name] == nil {
			t.Errorf("%s: contact_emails %q, want %q", name, got[name], w)
		}
	}

	for _, tc := range []struct{ file, header, want string }{
		{"name,description,url,try_link,video_link,challenge_list,emails\nA,d,,,,,a@example.com\nB,d,,,,,not-an-address\n", "true", "row 3: contact_emails: "},
		{"A,d,,,,,a@example.com\nB,d,,,,,b@example.com;oops\n", "", "row 2: contact_emails: "},
	} {
		code, b := ts.uploadCSV("/api/project/csv", []byte(tc.file), map[string]string{"hasHeader": tc.header}, asAdmin)
		if code != 400 || !strings.Contains(errorText(b), tc.want) {
			t.Errorf("status %d body %s, want 400 containing %q", code, b, tc.want)
		}
	}
	if n := len(ts.projectList()); n != 4 {
		t.Fatalf("refused imports changed the projects: %d, want 4", n)
	}
}

// TestImportSubmissionsContactEmails: a submission export's submitter email and team
// member email columns become the project's contact emails (trimmed, deduplicated),
// while an email column about something else (an opt-in question) is not read; a bad
// address is a 400 naming the row, and nothing is added.
func TestImportSubmissionsContactEmails(t *testing.T) {
	ts := startServer(t)
	export := "Project Title,Submitter Email,Email Opt-In,Team Member 1 Email,Team Member 2 Email,Project Status\n" +
		"BikeFinder, ada@example.com ,Yes,grace@example.com,ADA@example.com,Submitted\n" +
		"Solo,solo@example.com,No,,,Submitted\n" +
		"Draft Thing,not an address,,,,Draft\n"
	var res importResult
	ts.mustUploadCSV(200, "/api/project/submissions", []byte(export), nil, &res)
	if res.Added != 2 {
		t.Fatalf("result %+v", res)
	}
	got := ts.contactEmails()
	if w := []string{"ada@example.com", "grace@example.com"}; !slices.Equal(got["BikeFinder"], w) {
		t.Errorf("BikeFinder: contact_emails %q, want %q", got["BikeFinder"], w)
	}
	if w := []string{"solo@example.com"}; !slices.Equal(got["Solo"], w) {
		t.Errorf("Solo: contact_emails %q, want %q", got["Solo"], w)
	}
	// The existing export fixture carries its submitters' addresses.
	ts.mustUploadCSV(200, "/api/project/submissions", csvFixture(t, "submissions.csv"), nil, &res)
	got = ts.contactEmails() // the fixture's BikeFinder comes later in the list than the first one
	for name, w := range map[string]string{"BikeFinder": "ada@example.com", "Bonjour Bot": "linus@example.com",
		"Apollo Guidance": "margaret@example.com", "Widget Swap": "barbara@example.com"} {
		if !slices.Equal(got[name], []string{w}) {
			t.Errorf("%s: contact_emails %q, want [%s]", name, got[name], w)
		}
	}

	bad := "Project Title,Submitter Email,Team Member 1 Email\nA,a@example.com,\nB,b@example.com,b at example dot com\n"
	code, b := ts.uploadCSV("/api/project/submissions", []byte(bad), nil, asAdmin)
	if code != 400 || !strings.Contains(errorText(b), "row 3: contact_emails: ") {
		t.Fatalf("bad address: %d %s, want 400 naming row 3", code, b)
	}
	if n := len(ts.projectList()); n != 2+res.Added {
		t.Fatalf("refused import changed the projects: %d", n)
	}
}
