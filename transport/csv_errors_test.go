package transport

import (
	"strings"
	"testing"
)

// TestCSVQuoteErrorsInPlainWords (docs/behaviour.md#csv-errors-in-plain-words): every
// CSV import answers malformed quoting with the spreadsheet row and column and what to
// do, never encoding/csv's own words, and imports nothing.
func TestCSVQuoteErrorsInPlainWords(t *testing.T) {
	ts := startServer(t)
	ts.addProject("Alpha", "")
	ts.addJudge("Ada", "ada@example.com", "")
	cases := []struct {
		name, path, file, want string
	}{
		{"never closed", "/api/judge/csv", "name,email\nAda,ada@example.com\nBob,\"bob@example.com\nCy,cy@example.com\n",
			`row 3, column 2 (B): this cell opens a quote mark (") that is never closed`},
		{"never closed at the end", "/api/project/csv", "name,description,url\nAlpha,\"nice", `row 2, column 2 (B): this cell opens a quote mark`},
		{"text after the closing quote", "/api/project/csv", "name,description,url\nAlpha,\"the best\" app,https://a.example\n",
			`row 2, column 2 (B): text after the closing quote mark (") of a quoted cell: put the whole cell in quote marks`},
		{"text after a quoted cell over two lines", "/api/project/csv", "name,description,url\nAlpha,x,y\nBeta,\"two\nlines\" more,z\n",
			`row 3, column 2 (B): text after the closing quote mark`},
		{"a quote mark mid-cell", "/api/admin/conflicts/csv", "judge,project\nada@example.com,The \"Alpha\" team\n",
			`row 2, column 2 (B): a quote mark (") in the middle of a cell`},
		{"mid-cell after a multi-byte letter, semicolons", "/api/judge/csv", "name;email\nZoé;zo\"e@example.com\n",
			`row 2, column 2 (B): a quote mark (") in the middle of a cell`},
		{"submissions export", "/api/project/submissions", "Project Title,Project Status,About The Project\nAlpha,Submitted,ok\nBeta,Submitted,\"x\"y\n",
			`row 3, column 3 (C): text after the closing quote mark`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			code, b := ts.uploadCSV(tc.path, []byte(tc.file), map[string]string{"hasHeader": "1", "noSend": "1"}, asAdmin)
			msg := errorText(b)
			if code != 400 || !strings.Contains(msg, tc.want) {
				t.Fatalf("status %d, error %q; want 400 containing %q", code, msg, tc.want)
			}
			if strings.Contains(msg, "quoted-field") || strings.Contains(msg, `bare "`) {
				t.Fatalf("the parser's own words: %q", msg)
			}
		})
	}
	if n := len(ts.judgeList()); n != 1 {
		t.Fatalf("refused imports left %d judges, want 1", n)
	}
	if n := len(ts.projectList()); n != 1 {
		t.Fatalf("refused imports left %d projects, want 1", n)
	}
	if n := len(conflictsOf(ts)); n != 0 {
		t.Fatalf("refused imports left %d conflicts", n)
	}
}

func TestColumnLetters(t *testing.T) {
	for n, want := range map[int]string{1: "A", 2: "B", 26: "Z", 27: "AA", 52: "AZ", 53: "BA", 512: "SR"} {
		if got := columnLetters(n); got != want {
			t.Errorf("column %d: %s, want %s", n, got, want)
		}
	}
}
