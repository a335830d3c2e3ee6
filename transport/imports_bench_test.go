package transport

import (
	"bytes"
	"context"
	"encoding/csv"
	"fmt"
	"io"
	"mime/multipart"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"podium/engine"
	"podium/persist"
)

// submissionExport builds a realistic submission-platform export with n submitted rows
// (multi-line quoted descriptions, several links, prizes, extra columns) plus a Draft
// every 50 rows.
func submissionExport(n int) []byte {
	var buf bytes.Buffer
	buf.Write(utf8BOM)
	w := csv.NewWriter(&buf)
	w.UseCRLF = true
	_ = w.Write([]string{"Submitter First Name", "Submitter Last Name", "Submitter Email", "Project Created At",
		"About The Project", "Opt-In Prizes", "Project Status", "Video Demo Link", "Project Title",
		`"Try it out" Links`, "Submission Url", "Built With", "Judging Status"})
	about := "## Inspiration\nWe wanted to make expo judging \"fair\", fast and fun.\n\n## What it does\n" +
		strings.Repeat("It ranks, compares, and explains results to organisers. ", 6) + "\n\n## Challenges\nTime zones, coffee."
	prizes := []string{"Best Use of AI", "Best Hardware Hack", "Sponsor Prize: Cloud", "Best Design"}
	for i := 0; i < n; i++ {
		status := "Submitted (Gallery/Visible)"
		if i%50 == 49 {
			status = "Draft"
		}
		_ = w.Write([]string{"First", "Last", fmt.Sprintf("team%d@example.com", i), "03/14/2026 10:02:11",
			about, prizes[i%4] + ", " + prizes[(i+1)%4], status, "https://www.youtube.com/watch?v=abc" + fmt.Sprint(i),
			fmt.Sprintf("Project %d", i), fmt.Sprintf("https://p%d.example.com, https://github.com/example/p%d", i, i),
			fmt.Sprintf("https://expo.example.com/software/p%d", i), "go, react, postgres", "Pending"})
	}
	w.Flush()
	return buf.Bytes()
}

// BenchmarkParseSubmissions5000 measures parsing a 5,000-row export (no engine).
func BenchmarkParseSubmissions5000(b *testing.B) {
	data := submissionExport(5000)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		imp, err := parseSubmissionsCSV(data)
		if err != nil || len(imp.projects) != 4900 {
			b.Fatalf("%v %d", err, len(imp.projects))
		}
	}
}

// BenchmarkImportSubmissions5000 measures the whole import through a real server: the
// multipart upload, parsing, one engine command with 4,900 projects, the durable
// journal write and the response. Each iteration uses a fresh server and data dir.
func BenchmarkImportSubmissions5000(b *testing.B) {
	data := submissionExport(5000)
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	fw, _ := mw.CreateFormFile("csv", "export.csv")
	_, _ = fw.Write(data)
	_ = mw.Close()
	payload, ctype := body.Bytes(), mw.FormDataContentType()
	b.SetBytes(int64(len(payload)))
	b.ReportAllocs()
	for b.Loop() {
		b.StopTimer()
		dir := b.TempDir()
		node, err := persist.Open(dir, persist.Options{Log: zerolog.Nop()})
		if err != nil {
			b.Fatal(err)
		}
		srv := New(Config{DataDir: dir, AdminPassword: testPassword}, node, zerolog.Nop())
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			b.Fatal(err)
		}
		go func() { _ = srv.Listen(ln) }()
		req, _ := http.NewRequest("POST", "http://"+ln.Addr().String()+"/api/project/submissions", bytes.NewReader(payload))
		req.Header.Set("Content-Type", ctype)
		req.SetBasicAuth("admin", testPassword)
		b.StartTimer()

		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		out, _ := io.ReadAll(resp.Body)
		resp.Body.Close()

		b.StopTimer()
		if resp.StatusCode != 200 || !bytes.Contains(out, []byte(`"added":4900`)) {
			b.Fatalf("%d %s", resp.StatusCode, out)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		_ = srv.Shutdown(ctx)
		cancel()
		_ = node.Close()
		b.StartTimer()
	}
}

// BenchmarkExportProjects10000 measures projects.csv for 10,000 projects in two parts:
// copying the rows under the engine's read lock, and encoding them after it.
func BenchmarkExportProjects10000(b *testing.B) {
	imp, err := parseSubmissionsCSV(submissionExport(10000))
	if err != nil {
		b.Fatal(err)
	}
	e, err := applyOnFreshEngine(&engine.CreateProjects{Projects: imp.projects, SkipIgnored: true, Rows: imp.rows})
	if err != nil {
		b.Fatal(err)
	}
	b.Run("copy-under-lock", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			e.Read(func(st *engine.State) { _ = projectRows(st) })
		}
	})
	var rows []exportProjectRow
	e.Read(func(st *engine.State) { rows = projectRows(st) })
	cells := make([][]string, len(rows))
	for i, r := range rows {
		cells[i] = r.cells
	}
	b.Run("encode", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_ = encodeCSV(projectsHeader, cells)
		}
	})
}
