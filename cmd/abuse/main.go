// Command abuse measures how a Podium server holds up against unauthenticated clients
// (docs/behaviour.md#security-and-limits): it starts the server binary on a fresh data directory and reports
// the server's peak RSS while 16 clients read the public project list (10,000 projects
// with long descriptions), while 40 clients request it and never read, while 8 clients
// send oversized bodies without credentials, and how many login-code guesses a second 50
// addresses get checked.
//
//	go run ./cmd/abuse -server ./podium [-seconds 10]
package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"flag"
	"fmt"
	"io"
	"mime/multipart"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"podium/loadtest/server"
)

const password = "abuse-admin-password"

func main() {
	bin := flag.String("server", "./podium", "server binary")
	secs := flag.Int("seconds", 10, "duration of each scenario")
	only := flag.String("only", "", "run one scenario: list, stalled, bodies, csv, guesses")
	flag.Parse()
	d := time.Duration(*secs) * time.Second
	srv, err := start(*bin)
	if err != nil {
		fmt.Fprintln(os.Stderr, "abuse:", err)
		os.Exit(1)
	}
	defer srv.stop()
	run := func(name string) bool { return *only == "" || *only == name }
	if run("list") || run("stalled") {
		if err := srv.seedProjects(10000, 2000); err != nil {
			fmt.Fprintln(os.Stderr, "abuse: seed:", err)
			os.Exit(1)
		}
		fmt.Printf("seeded 10,000 projects; RSS %d MiB\n", srv.rss()>>20)
	}
	if run("list") {
		fmt.Printf("16 public-list readers: peak RSS %d MiB\n", srv.peakDuring(d, func(ctx context.Context) { srv.readers(ctx, 16) })>>20)
	}
	if run("stalled") {
		fmt.Printf("40 stalled public-list clients: peak RSS %d MiB\n", srv.peakDuring(d, func(ctx context.Context) { srv.stalled(ctx, 40) })>>20)
	}
	if run("bodies") {
		before := srv.rss()
		fmt.Printf("8 oversized unauthenticated bodies: peak RSS %d MiB (before: %d MiB)\n",
			srv.peakDuring(d, func(ctx context.Context) { srv.bodies(ctx, 8) })>>20, before>>20)
	}
	if run("csv") {
		before := srv.rss()
		var status int
		peak := srv.peakDuring(5*time.Minute, func(context.Context) { status = srv.commasCSV(31 << 20) })
		fmt.Printf("31 MiB CSV of commas (admin upload): status %d, peak RSS %d MiB (before: %d MiB)\n", status, peak>>20, before>>20)
	}
	if run("guesses") {
		checked, refused := srv.guesses(d, 50)
		fmt.Printf("50 addresses guessing login codes for %v: %.1f guesses/s checked, %.1f/s refused\n",
			d, float64(checked)/d.Seconds(), float64(refused)/d.Seconds())
	}
}

// target is the server under test and the client that reaches it.
type target struct {
	p    *server.Process
	base string
	hc   *http.Client
}

// start runs the server binary on a fresh data directory and waits until it listens.
func start(bin string) (*target, error) {
	dir, err := os.MkdirTemp("", "podium-abuse-")
	if err != nil {
		return nil, err
	}
	p, err := server.New(bin, dir, "", []string{"ADMIN_PASSWORD=" + password, "LOG_LEVEL=warn", "TRUSTED_PROXIES=127.0.0.1"})
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := p.Start(ctx); err != nil {
		return nil, err
	}
	hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 100, DisableCompression: true}}
	return &target{p: p, base: p.URL(), hc: hc}, nil
}

// stop kills the server and removes its data directory.
func (s *target) stop() { s.p.Kill(); _ = os.RemoveAll(s.p.Dir()) }

// rss is the server's resident set size in bytes.
func (s *target) rss() int64 { return server.RSS(s.p.PID()) }

// peakDuring runs load for d and returns the highest RSS sampled meanwhile.
func (s *target) peakDuring(d time.Duration, load func(ctx context.Context)) int64 {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	done := make(chan struct{})
	go func() { load(ctx); close(done) }()
	var peak int64
	t := time.NewTicker(50 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-done:
			return max(peak, s.rss())
		case <-t.C:
			peak = max(peak, s.rss())
		}
	}
}

func (s *target) seedProjects(n, descLen int) error {
	var csv bytes.Buffer
	desc := strings.Repeat("lorem ipsum dolor sit amet ", descLen/27+1)[:descLen]
	for i := 0; i < n; i++ {
		fmt.Fprintf(&csv, "Project %d,%s %d,https://example.org/%d\n", i, desc, i, i)
	}
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	fw, _ := mw.CreateFormFile("csv", "p.csv")
	_, _ = fw.Write(csv.Bytes())
	_ = mw.Close()
	req, _ := http.NewRequest("POST", s.base+"/api/project/csv", &body)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	req.Header.Set("Authorization", "Basic "+base64.StdEncoding.EncodeToString([]byte("admin:"+password)))
	resp, err := s.hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		return fmt.Errorf("import: %d %s", resp.StatusCode, b)
	}
	return nil
}

// commasCSV uploads a CSV file of n commas as the admin and returns the status.
func (s *target) commasCSV(n int) int {
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	fw, _ := mw.CreateFormFile("csv", "p.csv")
	_, _ = fw.Write(bytes.Repeat([]byte{','}, n))
	_ = mw.Close()
	req, _ := http.NewRequest("POST", s.base+"/api/project/csv", &body)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	req.Header.Set("Authorization", "Basic "+base64.StdEncoding.EncodeToString([]byte("admin:"+password)))
	resp, err := s.hc.Do(req)
	if err != nil {
		return 0
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode
}

// readers fetch the public list in a loop (no gzip: the largest answer).
func (s *target) readers(ctx context.Context, n int) {
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				req, _ := http.NewRequestWithContext(ctx, "GET", s.base+"/api/project/list/public", nil)
				resp, err := s.hc.Do(req)
				if err != nil {
					continue
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
		}()
	}
	wg.Wait()
}

// stalled clients send the request and never read the answer.
func (s *target) stalled(ctx context.Context, n int) {
	var conns []net.Conn
	for i := 0; i < n; i++ {
		c, err := net.Dial("tcp", strings.TrimPrefix(s.base, "http://"))
		if err != nil {
			continue
		}
		if tc, ok := c.(*net.TCPConn); ok {
			_ = tc.SetReadBuffer(4096)
		}
		fmt.Fprintf(c, "GET /api/project/list/public HTTP/1.1\r\nHost: x\r\n\r\n")
		conns = append(conns, c)
	}
	<-ctx.Done()
	for _, c := range conns {
		_ = c.Close()
	}
}

// bodies send 65 MiB bodies without credentials, in a loop.
func (s *target) bodies(ctx context.Context, n int) {
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			paths := []string{"/api/judge/login", "/api/admin/content", "/api/project/csv", "/api/admin/login"}
			for ctx.Err() == nil {
				req, _ := http.NewRequestWithContext(ctx, "PUT", s.base+paths[i%len(paths)], io.LimitReader(zeros{}, 65<<20))
				if i%len(paths) != 1 {
					req.Method = "POST"
				}
				req.ContentLength = 65 << 20
				req.Header.Set("Content-Type", "application/json")
				if resp, err := s.hc.Do(req); err == nil {
					_, _ = io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
				}
			}
		}(i)
	}
	wg.Wait()
}

type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = ' '
	}
	return len(p), nil
}

// guesses sends wrong login codes from n addresses (X-Forwarded-For through the trusted
// loopback) for d and counts the ones the server checked (401) and refused (429).
func (s *target) guesses(d time.Duration, n int) (checked, refused int64) {
	var c, r atomic.Int64
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			for g := 0; ctx.Err() == nil; g++ {
				body := fmt.Sprintf(`{"code":"%08d"}`, (i*7919+g*104729)%100000000)
				req, _ := http.NewRequestWithContext(ctx, "POST", s.base+"/api/judge/login", strings.NewReader(body))
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("X-Forwarded-For", fmt.Sprintf("198.51.100.%d", i+1))
				resp, err := s.hc.Do(req)
				if err != nil {
					continue
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				switch resp.StatusCode {
				case 400, 401:
					c.Add(1)
				case 429:
					r.Add(1)
				}
			}
		}(i)
	}
	wg.Wait()
	return c.Load(), r.Load()
}
