package main

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

const sponsorsKey = "sponsors-bench-key"

// TestSponsorsAgainstNetHTTP compares, through the binary, GET /v1/public/sponsors (40
// sponsors with 50 KiB PNG logos, gzip: a 2 MB body) with a net/http server in a
// process of its own serving the same bytes and headers: 5 rounds, each 1 s of 8
// keep-alive clients against each server in turn (alternating which goes first);
// requests/s and server CPU per response (/proc), medians of the rounds. Opt-in
// (docs/performance.md):
//
//	PODIUM_SPONSORS_BENCH=1 go test ./cmd/podium -run SponsorsAgainstNetHTTP -v
func TestSponsorsAgainstNetHTTP(t *testing.T) {
	if os.Getenv("PODIUM_SPONSORS_BENCH") == "" {
		t.Skip("PODIUM_SPONSORS_BENCH not set")
	}
	cmd := exec.Command(benchBinary(t))
	cmd.Env = append(os.Environ(), "PORT=0", "DATA_DIR="+t.TempDir(), "ADMIN_PASSWORD="+killPassword, "LOG_LEVEL=warn", "PUBLIC_API_KEY="+sponsorsKey)
	p := startCmd(t, cmd)
	sponsors := make([]any, 40)
	for i := range sponsors {
		logo := make([]byte, 50<<10)
		_, _ = rand.Read(logo)
		copy(logo, "\x89PNG\r\n\x1a\n")
		sponsors[i] = map[string]any{"name": fmt.Sprintf("Sponsor %02d", i), "tier": "gold", "display_order": i,
			"logo_data": base64.StdEncoding.EncodeToString(logo), "logo_content_type": "image/png"}
	}
	p.must("PUT", "/api/admin/content", map[string]any{"schedule": []any{}, "sponsors": sponsors, "faq": []any{}}, "")
	url := p.base + "/v1/public/sponsors"
	body, hdr := fetchSponsors(t, url)

	// The baseline: this test binary re-run as a plain net/http server of the same bytes.
	dir := t.TempDir()
	if err := os.WriteFile(dir+"/body", body, 0o600); err != nil {
		t.Fatal(err)
	}
	h, _ := json.Marshal(hdr)
	if err := os.WriteFile(dir+"/headers", h, 0o600); err != nil {
		t.Fatal(err)
	}
	base := exec.Command(os.Args[0], "-test.run", "^TestStaticServerProcess$")
	base.Env = append(os.Environ(), "PODIUM_STATIC_SERVE="+dir)
	out, _ := base.StdoutPipe()
	if err := base.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = base.Process.Kill(); _ = base.Wait() })
	line := make([]byte, 64)
	n, _ := out.Read(line)
	baseURL := "http://" + strings.TrimSpace(string(line[:n])) + "/v1/public/sponsors"
	if b, _ := fetchSponsors(t, baseURL); !bytes.Equal(b, body) {
		t.Fatal("the baseline serves other bytes")
	}

	type side struct {
		name string
		url  string
		pid  int
		rate []float64
		cpu  []float64 // µs per response
	}
	sides := []*side{{name: "podium", url: url, pid: p.cmd.Process.Pid}, {name: "net/http", url: baseURL, pid: base.Process.Pid}}
	for round := 0; round < 5; round++ {
		for k := range sides {
			s := sides[(round+k)%2]
			c0 := pidCPU(t, s.pid)
			n, d := hammer(t, s.url, 8, time.Second)
			cpu := pidCPU(t, s.pid) - c0
			s.rate = append(s.rate, float64(n)/d.Seconds())
			s.cpu = append(s.cpu, float64(cpu.Microseconds())/float64(n))
		}
	}
	med := func(v []float64) float64 { v = slices.Clone(v); slices.Sort(v); return v[len(v)/2] }
	var ratios []float64
	for i := range sides[0].rate {
		ratios = append(ratios, sides[0].rate[i]/sides[1].rate[i])
	}
	t.Logf("sponsors (%d bytes gzip): podium %.0f req/s, %.0f µs CPU per response; net/http %.0f req/s, %.0f µs; ratio of req/s %.2f (rounds %.2f), CPU per response %.2f×",
		len(body), med(sides[0].rate), med(sides[0].cpu), med(sides[1].rate), med(sides[1].cpu), med(ratios), ratios, med(sides[0].cpu)/med(sides[1].cpu))
}

// TestStaticServerProcess is TestSponsorsAgainstNetHTTP's baseline server when run
// with PODIUM_STATIC_SERVE (it prints its address and serves until killed).
func TestStaticServerProcess(t *testing.T) {
	dir := os.Getenv("PODIUM_STATIC_SERVE")
	if dir == "" {
		t.Skip("only as TestSponsorsAgainstNetHTTP's baseline")
	}
	body, err := os.ReadFile(dir + "/body")
	if err != nil {
		t.Fatal(err)
	}
	var hdr http.Header
	h, _ := os.ReadFile(dir + "/headers")
	if err := json.Unmarshal(h, &hdr); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	fmt.Println(ln.Addr().String())
	size := strconv.Itoa(len(body))
	_ = http.Serve(ln, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		for k, v := range hdr {
			w.Header()[k] = v
		}
		w.Header().Set("Content-Length", size)
		_, _ = w.Write(body)
	}))
}

// fetchSponsors returns the gzip'd sponsors body and the headers a client sees (Date
// and Content-Length left out).
func fetchSponsors(t *testing.T, url string) ([]byte, http.Header) {
	t.Helper()
	req, _ := http.NewRequest("GET", url, nil)
	req.Header.Set("X-API-Key", sponsorsKey)
	req.Header.Set("Accept-Encoding", "gzip")
	resp, err := (&http.Transport{DisableCompression: true}).RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != 200 || resp.Header.Get("Content-Encoding") != "gzip" {
		t.Fatalf("GET %s: %d %v %v", url, resp.StatusCode, resp.Header, err)
	}
	hdr := resp.Header.Clone()
	hdr.Del("Date")
	hdr.Del("Content-Length")
	return b, hdr
}

// hammer runs clients keep-alive clients fetching url for d; it returns the responses.
func hammer(t *testing.T, url string, clients int, d time.Duration) (int, time.Duration) {
	tr := &http.Transport{DisableCompression: true, MaxIdleConnsPerHost: clients}
	defer tr.CloseIdleConnections()
	var mu sync.Mutex
	total := 0
	var wg sync.WaitGroup
	start := time.Now()
	for c := 0; c < clients; c++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			buf := make([]byte, 256<<10)
			n := 0
			for time.Since(start) < d {
				req, _ := http.NewRequest("GET", url, nil)
				req.Header.Set("X-API-Key", sponsorsKey)
				req.Header.Set("Accept-Encoding", "gzip")
				resp, err := tr.RoundTrip(req)
				if err != nil {
					t.Error(err)
					return
				}
				_, _ = io.CopyBuffer(struct{ io.Writer }{io.Discard}, resp.Body, buf)
				resp.Body.Close()
				n++
			}
			mu.Lock()
			total += n
			mu.Unlock()
		}()
	}
	wg.Wait()
	return total, time.Since(start)
}

// pidCPU returns a process's CPU time (user + system) so far.
func pidCPU(t *testing.T, pid int) time.Duration {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		t.Fatal(err)
	}
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+2:]))
	var ut, st int
	fmt.Sscan(f[11], &ut)
	fmt.Sscan(f[12], &st)
	return time.Duration(ut+st) * 10 * time.Millisecond
}
