package transport

import (
	"bytes"
	"fmt"
	"runtime"
	"strings"
	"testing"
)

// TestCSVLineEndsAndNUL: CR-only files import; a NUL character is refused naming its row.
func TestCSVLineEndsAndNUL(t *testing.T) {
	ts := startServer(t)
	var res struct{ Added int }
	ts.mustUploadCSV(200, "/api/judge/csv", []byte("name,email\rAda,ada@example.org\rBob,bob@example.org\r"), map[string]string{"hasHeader": "true", "noSend": "true"}, &res)
	if res.Added != 2 {
		t.Fatalf("CR-only file: added %d", res.Added)
	}
	body := ts.mustUploadCSV(400, "/api/project/csv", []byte("name,description,url\nGood,d,https://a.example\nBad\x00Name,d,https://b.example\n"), map[string]string{"hasHeader": "true"}, nil)
	if !strings.Contains(string(body), "row 3") || !strings.Contains(string(body), "NUL") {
		t.Fatalf("NUL refusal: %s", body)
	}
	wide := "a" + strings.Repeat(",b", maxCSVCellsPerRow) + "\n"
	body = ts.mustUploadCSV(400, "/api/project/csv", []byte("x,y,z\n"+wide), nil, nil)
	if !strings.Contains(string(body), "row 2") || !strings.Contains(string(body), "cells") {
		t.Fatalf("wide row: %s", body)
	}
}

// allocDuring returns the bytes allocated while fn runs.
func allocDuring(fn func()) uint64 {
	var a, b runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&a)
	fn()
	runtime.ReadMemStats(&b)
	return b.TotalAlloc - a.TotalAlloc
}

// TestCSVWorstCaseMemory: the worst 31 MB files cost a small multiple of their size to
// parse or refuse (a file of commas used to take 2.2 GiB).
func TestCSVWorstCaseMemory(t *testing.T) {
	const size = 31 << 20
	cases := map[string][]byte{
		"commas":          bytes.Repeat([]byte{','}, size),
		"short rows":      bytes.Repeat([]byte("a\n"), size/2),
		"commas and rows": bytes.Repeat([]byte(strings.Repeat(",", 500)+"\n"), size/501),
		"quoted newlines": append([]byte(`"`), bytes.Repeat([]byte("\n"), size)...),
	}
	for name, data := range cases {
		var err error
		n := allocDuring(func() { _, err = parseProjectsCSV(data, false) })
		if err == nil {
			t.Errorf("%s: accepted", name)
		}
		checkCSVRefusal(t, err)
		if n > 3*size {
			t.Errorf("%s: %d MiB allocated for a %d MiB file", name, n>>20, size>>20)
		}
		t.Logf("%s: %d MiB allocated, %v", name, n>>20, err)
	}
	// The largest legitimate shape: many rows of a few cells.
	var sb strings.Builder
	for i := 0; sb.Len() < 8<<20; i++ {
		fmt.Fprintf(&sb, "Judge %d,judge%d@example.org,,note\n", i, i)
	}
	data := []byte(sb.String())
	n := allocDuring(func() {
		if _, err := parseJudgesCSV(data, false, nil, map[string]bool{}); err != nil {
			t.Fatal(err)
		}
	})
	t.Logf("valid %d MiB judges file: %d MiB allocated", len(data)>>20, n>>20)
}

var importJudges = 100000

// TestImport100000Judges: a 100,000-judge import gets a login code for everyone.
func TestImport100000Judges(t *testing.T) {
	ts := startServer(t)
	var sb strings.Builder
	sb.WriteString("name,email\n")
	for i := 0; i < importJudges; i++ {
		fmt.Fprintf(&sb, "Judge %d,j%d@example.org\n", i, i)
	}
	var res struct{ Added int }
	ts.mustUploadCSV(200, "/api/judge/csv", []byte(sb.String()), map[string]string{"hasHeader": "true", "noSend": "true"}, &res)
	if res.Added != importJudges {
		t.Fatalf("added %d", res.Added)
	}
}

// TestContentUpdateWithoutFields: PUT of a content entry with {} changes nothing and is
// refused (400); a PUT naming a field still updates only that field.
func TestContentUpdateWithoutFields(t *testing.T) {
	ts := startServer(t)
	for kind, body := range map[string]map[string]any{
		"faq":      {"question": "q", "answer": "a"},
		"sponsors": {"name": "Acme"},
		"schedule": {"event_name": "Opening", "start_time": "2026-03-01T09:00:00Z", "end_time": "2026-03-01T10:00:00Z"},
	} {
		var res struct{ ID string }
		ts.must(200, "POST", "/api/admin/content/"+kind, body, asAdmin, &res)
		b := ts.must(400, "PUT", "/api/admin/content/"+kind+"/"+res.ID, map[string]any{}, asAdmin, nil)
		if !strings.Contains(string(b), "no field to change") {
			t.Fatalf("%s: %s", kind, b)
		}
		ts.must(400, "PUT", "/api/admin/content/"+kind+"/"+res.ID, map[string]any{"unknown": 1}, asAdmin, nil)
	}
}

// TestSVGLogoWithScriptRefused: SVG logos that could run code are 400 through the API.
func TestSVGLogoWithScriptRefused(t *testing.T) {
	ts := startServer(t)
	for _, svg := range []string{
		`<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>`,
		`<svg xmlns="http://www.w3.org/2000/svg" onload="alert(1)"/>`,
		`<svg xmlns="http://www.w3.org/2000/svg" xmlns:x="http://www.w3.org/1999/xlink"><a x:href="java&#x09;script:alert(1)"><rect/></a></svg>`,
		`<svg xmlns="http://www.w3.org/2000/svg"><foreignObject><div/></foreignObject></svg>`,
	} {
		b := ts.must(400, "POST", "/api/admin/content/sponsors", map[string]any{"name": "X", "logo_data": b64([]byte(svg)), "logo_content_type": "image/svg+xml"}, asAdmin, nil)
		if !strings.Contains(string(b), "SVG logo refused") {
			t.Fatalf("%s: %s", svg, b)
		}
	}
	ts.must(200, "POST", "/api/admin/content/sponsors", map[string]any{"name": "Y", "logo_data": b64(svgBytes), "logo_content_type": "image/svg+xml"}, asAdmin, nil)
}
