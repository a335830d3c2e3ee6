package main

import (
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rs/zerolog"

	"podium/engine"
	"podium/persist"
)

func writeDoc(t *testing.T, doc string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "content.json")
	if err := os.WriteFile(p, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func readContent(t *testing.T, dir string) engine.Content {
	t.Helper()
	node, err := persist.Open(dir, persist.Options{Log: zerolog.Nop()})
	if err != nil {
		t.Fatal(err)
	}
	defer node.Close()
	var c engine.Content
	node.Read(func(s *engine.State) {
		c = engine.Content{
			Schedule: append([]engine.ScheduleEntry(nil), s.Content.Schedule...),
			Sponsors: append([]engine.Sponsor(nil), s.Content.Sponsors...),
			FAQ:      append([]engine.FAQEntry(nil), s.Content.FAQ...),
		}
	})
	return c
}

func TestContentImport(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data") // created by the import
	logo := base64.StdEncoding.EncodeToString([]byte("GIF89a\x01\x00\x01\x00"))
	doc := `{
	  "schedule": [{"event_name": "Kickoff", "start_time": "2026-03-01T09:00:00Z", "end_time": "2026-03-01T09:30:00Z", "tags": ["main"]}],
	  "sponsors": [{"name": "Acme", "tier": "gold", "logo_data": "` + logo + `", "logo_content_type": "image/gif"}, {"name": "Plain"}],
	  "faq": []
	}`
	if err := contentCommand([]string{"import", writeDoc(t, doc), dir}); err != nil {
		t.Fatal(err)
	}
	c := readContent(t, dir)
	if len(c.Schedule) != 1 || c.Schedule[0].EventName != "Kickoff" || len(c.Sponsors) != 2 || c.Sponsors[0].LogoData != logo || len(c.FAQ) != 0 {
		t.Fatalf("imported content = %+v", c)
	}
	if got := engine.ContentTime(c.Schedule[0].EndTime); got != "2026-03-01T09:30:00Z" {
		t.Fatalf("end time %s", got)
	}

	// A second import replaces everything; an invalid one changes nothing.
	if err := contentCommand([]string{"import", writeDoc(t, `{"schedule":[],"sponsors":[],"faq":[{"question":"q","answer":"a"}]}`), dir}); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []struct{ doc, want string }{
		{`{"schedule":[],"sponsors":[]}`, `"faq" is required`},
		{`{"schedule":[],"sponsors":[{"name":"x","logo_data":"` + logo + `","logo_content_type":"image/png"}],"faq":[]}`, "sponsors[0]: logo_data does not contain a image/png image"},
		{`not json`, "invalid JSON"},
	} {
		err := contentCommand([]string{"import", writeDoc(t, bad.doc), dir})
		if err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Fatalf("import of %s: %v, want %q", bad.doc, err, bad.want)
		}
	}
	c = readContent(t, dir)
	if len(c.Schedule) != 0 || len(c.Sponsors) != 0 || len(c.FAQ) != 1 || c.FAQ[0].Question != "q" {
		t.Fatalf("content after replace = %+v", c)
	}
}

func TestContentImportErrors(t *testing.T) {
	for _, args := range [][]string{nil, {"import"}, {"export", "x.json"}, {"import", "a", "b", "c"}} {
		if err := contentCommand(args); err == nil || !strings.Contains(err.Error(), "usage") {
			t.Fatalf("args %v: %v", args, err)
		}
	}
	if err := contentCommand([]string{"import", filepath.Join(t.TempDir(), "missing.json"), t.TempDir()}); err == nil {
		t.Fatal("missing file accepted")
	}
	// A directory held by a running server (an open node) is refused with a hint.
	dir := t.TempDir()
	node, err := persist.Open(dir, persist.Options{Log: zerolog.Nop()})
	if err != nil {
		t.Fatal(err)
	}
	defer node.Close()
	err = contentCommand([]string{"import", writeDoc(t, `{"schedule":[],"sponsors":[],"faq":[]}`), dir})
	if err == nil || !strings.Contains(err.Error(), "PUT /api/admin/content") {
		t.Fatalf("locked dir: %v", err)
	}
}
