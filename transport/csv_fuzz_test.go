package transport

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"podium/engine"
)

// Fuzz tests of the CSV parsers. The seed corpus (fixtures plus tricky snippets) runs in
// every normal `go test`; `go test -fuzz FuzzJudgesCSV ./transport/` explores further.
// Each parser must never panic, must refuse bad input with a 400, and what it accepts
// must apply to a fresh engine all-or-nothing.

func addFuzzSeeds(f *testing.F) {
	f.Helper()
	files, err := filepath.Glob(filepath.Join("testdata", "*.csv"))
	if err != nil {
		f.Fatal(err)
	}
	for _, name := range files {
		b, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b, true)
		f.Add(b, false)
	}
	for _, s := range []string{
		"", "\n", "\r\n\r\n", "\xef\xbb\xbf", ",,,\n,,,", "\"", "\"\"\"", "a,\"b\nc\",d",
		"x,y@z.co\n", "Project Title\n\n", "Project Title,Project Status\nA,Draft\n",
		"\xff\xfe", "a\rb,c", "=HYPERLINK(\"x\"),a@b.co,,=1+1",
		"Project Title,\"Try it out\" Links\nP,\"github.com/a, javascript:x\"\n",
	} {
		f.Add([]byte(s), true)
		f.Add([]byte(s), false)
	}
}

// applyOnFreshEngine applies cmd to a brand-new engine and returns the error and the engine.
func applyOnFreshEngine(cmd engine.Command) (*engine.Engine, error) {
	e := engine.New()
	_, _, err := e.Apply(&engine.Envelope{Time: 1_700_000_000_000, Seed: 42, Actor: engine.Admin, Cmd: cmd})
	return e, err
}

// checkCSVRefusal fails unless err is a client error (400).
func checkCSVRefusal(t *testing.T, err error) {
	t.Helper()
	var he *httpError
	if !errors.As(err, &he) || he.status != 400 {
		t.Fatalf("refusal is not a 400: %#v", err)
	}
}

func FuzzJudgesCSV(f *testing.F) {
	addFuzzSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte, hasHeader bool) {
		imp, err := parseJudgesCSV(data, hasHeader, []string{}, map[string]bool{})
		if err != nil {
			checkCSVRefusal(t, err)
			return
		}
		if len(imp.judges) == 0 || len(imp.judges) != len(imp.rows) {
			t.Fatalf("accepted %d judges with %d rows", len(imp.judges), len(imp.rows))
		}
		e, err := applyOnFreshEngine(&engine.CreateJudges{Judges: imp.judges, Codes: newLoginCodes(len(imp.judges))})
		var n int
		e.Read(func(s *engine.State) { n = len(s.Judges) })
		if err != nil {
			// The parser checked everything the engine checks: a refusal here means
			// the two disagree.
			t.Fatalf("parser accepted what the engine refused: %v", err)
		}
		if n != len(imp.judges) {
			t.Fatalf("partial import: %d of %d judges", n, len(imp.judges))
		}
	})
}

// checkProjects applies an accepted project import to a fresh engine: all or nothing.
func checkProjects(t *testing.T, imp *projectImport) {
	t.Helper()
	if len(imp.projects) != len(imp.rows) {
		t.Fatalf("%d projects with %d rows", len(imp.projects), len(imp.rows))
	}
	if len(imp.projects) == 0 {
		return
	}
	e, err := applyOnFreshEngine(&engine.CreateProjects{Projects: imp.projects, SkipIgnored: true, Rows: imp.rows})
	var n int
	e.Read(func(s *engine.State) { n = len(s.Projects) })
	if err != nil {
		t.Fatalf("parser accepted what the engine refused: %v", err)
	}
	if n != len(imp.projects) {
		t.Fatalf("partial import: %d of %d projects", n, len(imp.projects))
	}
}

func FuzzProjectsCSV(f *testing.F) {
	addFuzzSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte, hasHeader bool) {
		imp, err := parseProjectsCSV(data, hasHeader)
		if err != nil {
			checkCSVRefusal(t, err)
			return
		}
		checkProjects(t, imp)
	})
}

func FuzzSubmissionsCSV(f *testing.F) {
	addFuzzSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte, _ bool) {
		imp, err := parseSubmissionsCSV(data)
		if err != nil {
			checkCSVRefusal(t, err)
			return
		}
		checkProjects(t, imp)
	})
}
