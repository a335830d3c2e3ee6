package main

import (
	"net/http"
	"regexp"
	"testing"
	"time"
)

// TestPprofListener: PPROF_ADDR serves the profiling endpoints on their own listener and
// the public port never does.
func TestPprofListener(t *testing.T) {
	p := startBinary(t, t.TempDir(), "PPROF_ADDR=127.0.0.1:0")
	re := regexp.MustCompile(`podium pprof on (http://[^ ]+/debug/pprof/)`)
	var url string
	for deadline := time.Now().Add(10 * time.Second); url == "" && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		p.mu.Lock()
		if m := re.FindStringSubmatch(p.out.String()); m != nil {
			url = m[1]
		}
		p.mu.Unlock()
	}
	if url == "" {
		t.Fatal("no pprof address printed")
	}
	resp, err := http.Get(url + "goroutine?debug=1")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("pprof listener: %d", resp.StatusCode)
	}
	code, _, err := p.req("GET", "/debug/pprof/goroutine?debug=1", nil, "")
	if err != nil {
		t.Fatal(err)
	}
	if code == http.StatusOK {
		t.Fatal("the public port serves pprof")
	}
}

// TestPprofOffByDefault: without PPROF_ADDR nothing is printed about pprof.
func TestPprofOffByDefault(t *testing.T) {
	p := startBinary(t, t.TempDir())
	p.must("GET", "/healthz", nil, "")
	p.mu.Lock()
	defer p.mu.Unlock()
	if regexp.MustCompile(`pprof`).MatchString(p.out.String()) {
		t.Fatalf("pprof mentioned without PPROF_ADDR:\n%s", p.out.String())
	}
}
