package transport

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// zeros is an endless reader of 'x' bytes.
type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = 'x'
	}
	return len(p), nil
}

// send posts n bytes of 'x' to path; chunked when n < 0 (then 40 MiB are offered).
func (ts *testServer) send(method, path, ctype string, n int64, hdr map[string]string) (int, string) {
	ts.t.Helper()
	var body io.Reader
	if n >= 0 {
		body = io.LimitReader(zeros{}, n)
	} else {
		body = io.NopCloser(io.LimitReader(zeros{}, 40<<20)) // unknown length: chunked
	}
	if strings.Contains(ctype, "boundary=xyz") { // a CSV file part that never ends
		head := "--xyz\r\nContent-Disposition: form-data; name=\"csv\"; filename=\"a.csv\"\r\n\r\n"
		body = io.MultiReader(strings.NewReader(head), body)
		if n >= 0 {
			n += int64(len(head))
		}
	}
	req, err := http.NewRequest(method, ts.URL+path, body)
	if err != nil {
		ts.t.Fatal(err)
	}
	if n >= 0 {
		req.ContentLength = n
	}
	if ctype != "" {
		req.Header.Set("Content-Type", ctype)
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		ts.t.Fatalf("%s %s (%d bytes): %v", method, path, n, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func basicAdmin() map[string]string {
	req, _ := http.NewRequest("GET", "/", nil)
	req.SetBasicAuth("admin", testPassword)
	return map[string]string{"Authorization": req.Header.Get("Authorization")}
}

// TestBodyLimitsBeforeAuth: bodies over a route's limit are a JSON 413 that the client
// reads (the rest is drained, not reset), with or without a Content-Length; the bulk
// routes are not read before their auth; afterwards the server still answers.
func TestBodyLimitsBeforeAuth(t *testing.T) {
	ts := startServer(t)
	for _, tc := range []struct {
		name, method, path, ctype string
		n                         int64
		hdr                       map[string]string
		want                      int
	}{
		{"65 MiB login", "POST", "/api/judge/login", "application/json", 65 << 20, nil, 413},
		{"chunked login", "POST", "/api/judge/login", "application/json", -1, nil, 413},
		{"just over 1 MiB", "POST", "/api/admin/login", "application/json", 1<<20 + 1, nil, 413},
		{"2 MiB to a JSON route as admin", "POST", "/api/project/new", "application/json", 2 << 20, basicAdmin(), 413},
		{"bulk content without auth", "PUT", "/api/admin/content", "application/json", 10 << 20, nil, 401},
		{"bulk content over 64 MiB", "PUT", "/api/admin/content", "application/json", 64<<20 + 1, basicAdmin(), 413},
		{"content item over 2 MiB", "POST", "/api/admin/content/faq", "application/json", 2<<20 + 1, basicAdmin(), 413},
		{"content item without auth", "POST", "/api/admin/content/faq", "application/json", 2 << 20, nil, 401},
		{"CSV upload without auth", "POST", "/api/judge/csv", "multipart/form-data; boundary=xyz", 30 << 20, nil, 401},
		{"CSV upload over 32 MiB", "POST", "/api/project/csv", "multipart/form-data; boundary=xyz", 32<<20 + 1, basicAdmin(), 413},
		{"chunked CSV upload", "POST", "/api/project/csv", "multipart/form-data; boundary=xyz", -1, basicAdmin(), 413},
	} {
		code, body := ts.send(tc.method, tc.path, tc.ctype, tc.n, tc.hdr)
		if code != tc.want || !strings.Contains(body, `"error"`) {
			t.Errorf("%s: %d %.200s, want %d with a JSON error", tc.name, code, body, tc.want)
		}
	}
	// A bulk document just under its limit is read after auth (then refused as JSON).
	code, body := ts.send("PUT", "/api/admin/content", "application/json", 3<<20, basicAdmin())
	if code != 400 || !strings.Contains(body, "invalid JSON") {
		t.Fatalf("3 MiB bulk document: %d %s", code, body)
	}
	ts.must(200, "GET", "/healthz", nil, anon, nil)
}

// TestJSONRoutesNeedJSON: a non-empty body on a JSON route must say it is JSON (415),
// compressed bodies are refused (415), and an empty body is judged by the route.
func TestJSONRoutesNeedJSON(t *testing.T) {
	ts := startServer(t)
	post := func(ctype, enc, body string) (int, string) {
		req, _ := http.NewRequest("POST", ts.URL+"/api/admin/login", strings.NewReader(body))
		if ctype != "" {
			req.Header.Set("Content-Type", ctype)
		}
		if enc != "" {
			req.Header.Set("Content-Encoding", enc)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	good := `{"password":"` + testPassword + `"}`
	for _, tc := range []struct {
		ctype, enc, body string
		want             int
	}{
		{"text/plain", "", good, 415},
		{"application/x-www-form-urlencoded", "", good, 415},
		{"multipart/form-data; boundary=x", "", good, 415},
		{"", "", good, 415},
		{"application/json", "gzip", good, 415},
		{"application/json; charset=utf-8", "", good, 200},
		{"application/merge-patch+json", "", good, 200},
		{"text/plain", "", "", 400}, // empty: the route's own "body is required"
	} {
		if code, body := post(tc.ctype, tc.enc, tc.body); code != tc.want {
			t.Errorf("Content-Type %q Content-Encoding %q: %d %s, want %d", tc.ctype, tc.enc, code, body, tc.want)
		}
	}
	// Multipart routes take multipart; JSON sent there is refused by the route.
	if code, _ := ts.do("POST", "/api/judge/csv", "{}", asAdmin); code != 400 {
		t.Fatalf("JSON to the CSV route: %d", code)
	}
}

// TestCSVUploadStreamed: a CSV upload is parsed from the socket after auth, with the
// hasHeader / headerRow field before or after the file.
func TestCSVUploadStreamed(t *testing.T) {
	ts := startServer(t)
	var sb strings.Builder
	sb.WriteString("name,description,url\n")
	for i := 0; i < 2000; i++ {
		fmt.Fprintf(&sb, "P%d,%s,https://example.org/%d\n", i, strings.Repeat("d", 500), i)
	}
	var res struct{ Added int }
	ts.mustUploadCSV(200, "/api/project/csv", []byte(sb.String()), map[string]string{"headerRow": "true"}, &res)
	if res.Added != 2000 {
		t.Fatalf("added %d", res.Added)
	}
	// Field after the file, as some clients order them.
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	fw, _ := mw.CreateFormFile("csv", "j.csv")
	_, _ = fw.Write([]byte("name,email\nAda,ada@example.org\n"))
	_ = mw.WriteField("hasHeader", "1")
	_ = mw.WriteField("noSend", "true")
	_ = mw.Close()
	req, _ := http.NewRequest("POST", ts.URL+"/api/judge/csv", &body)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	req.SetBasicAuth("admin", testPassword)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(b), `"added":1`) {
		t.Fatalf("judges upload: %d %s", resp.StatusCode, b)
	}
	// Malformed multipart (a file part that never ends): 400, and the server answers after.
	code, out := ts.send("POST", "/api/judge/csv", "multipart/form-data; boundary=xyz", 1000, basicAdmin())
	if code != 400 {
		t.Fatalf("malformed multipart: %d %s", code, out)
	}
	ts.must(200, "GET", "/healthz", nil, anon, nil)
}

// TestPublicProjectListCached: the public listing carries an ETag, is gzip-compressed
// when asked, answers If-None-Match with 304, and every change is visible at once.
func TestPublicProjectListCached(t *testing.T) {
	ts := startServer(t)
	ids := []string{ts.addProject("Alpha", ""), ts.addProject("Beta", "")}
	get := func(hdr map[string]string) (*http.Response, []byte) {
		req, _ := http.NewRequest("GET", ts.URL+"/api/project/list/public", nil)
		for k, v := range hdr {
			req.Header.Set(k, v)
		}
		tr := &http.Transport{DisableCompression: true}
		resp, err := (&http.Client{Transport: tr}).Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp, b
	}
	resp, plain := get(nil)
	etag := resp.Header.Get("ETag")
	var list []struct{ ID, Name string }
	if err := json.Unmarshal(plain, &list); err != nil || len(list) != 2 || etag == "" {
		t.Fatalf("list %s etag %q err %v", plain, etag, err)
	}
	if resp, _ := get(map[string]string{"If-None-Match": etag}); resp.StatusCode != 304 {
		t.Fatalf("If-None-Match: %d", resp.StatusCode)
	}
	// Enough projects that gzip pays off.
	for i := 0; i < 30; i++ {
		ts.addProject(fmt.Sprintf("P%d", i), "")
	}
	resp, gz := get(map[string]string{"Accept-Encoding": "gzip"})
	if resp.Header.Get("Content-Encoding") != "gzip" {
		t.Fatalf("no gzip: %v", resp.Header)
	}
	zr, err := gzip.NewReader(bytes.NewReader(gz))
	if err != nil {
		t.Fatal(err)
	}
	unz, _ := io.ReadAll(zr)
	_, plain2 := get(nil)
	if !bytes.Equal(unz, plain2) {
		t.Fatal("gzip and plain bodies differ")
	}
	// Hiding a project: the very next read shows it gone and the old ETag no longer matches.
	_, before := get(nil)
	resp, _ = get(nil)
	old := resp.Header.Get("ETag")
	ts.must(200, "PUT", "/api/project/hide/"+ids[0], map[string]any{"hide": true}, asAdmin, nil)
	resp, after := get(map[string]string{"If-None-Match": old})
	if resp.StatusCode != 200 || bytes.Equal(before, after) || strings.Contains(string(after), `"Alpha"`) {
		t.Fatalf("after hide: %d, still listed: %v", resp.StatusCode, strings.Contains(string(after), `"Alpha"`))
	}
	// Judging activity (no public change) keeps the body and its ETag.
	resp, _ = get(nil)
	etag = resp.Header.Get("ETag")
	id, code := ts.addJudge("J", "j@example.org", "")
	_ = id
	ts.login(code)
	if resp, _ := get(map[string]string{"If-None-Match": etag}); resp.StatusCode != 304 {
		t.Fatalf("after a judge change: %d", resp.StatusCode)
	}
}

// TestStalledReaderTimesOut: a client that requests a large answer and stops reading is
// disconnected once a write makes no progress for the idle write timeout; the server
// keeps answering others.
func TestStalledReaderTimesOut(t *testing.T) {
	ts := startServerOpts(t, nil, withWriteIdle(300*time.Millisecond))
	var sb strings.Builder
	sb.WriteString("name,description,url\n")
	for i := 0; i < 6000; i++ { // 13 MB: more than the socket buffers hold
		fmt.Fprintf(&sb, "P%d,%s,https://example.org/%d\n", i, strings.Repeat("d", 2000), i)
	}
	ts.mustUploadCSV(200, "/api/project/csv", []byte(sb.String()), map[string]string{"hasHeader": "true"}, nil)
	t0 := time.Now()
	_, full := ts.do("GET", "/api/project/list/public", nil, anon)
	t.Logf("seeded and read in %v", time.Since(t0))

	c, err := net.Dial("tcp", strings.TrimPrefix(ts.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fmt.Fprintf(c, "GET /api/project/list/public HTTP/1.1\r\nHost: x\r\n\r\n")
	time.Sleep(2 * time.Second) // stop reading for much longer than the timeout
	t1 := time.Now()
	got, _ := io.ReadAll(c) // then read what is left: the server gave up
	t.Logf("read rest in %v: %d of %d bytes", time.Since(t1), len(got), len(full))
	if len(got) >= len(full) {
		t.Fatalf("stalled client got %d bytes of a %d-byte answer: the write never timed out", len(got), len(full))
	}
	ts.must(200, "GET", "/healthz", nil, anon, nil)
}
