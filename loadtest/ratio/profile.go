package ratio

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime/pprof"
	"strings"
	"time"
)

// freeAddr returns a loopback address with a port free at the time of the call.
func freeAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return l.Addr().String(), nil
}

// saveMetrics writes the server's /metrics to path (best effort: the files only help to
// read a profile).
func saveMetrics(base, path string) {
	resp, err := http.Get(base + "/metrics")
	if err != nil {
		return
	}
	defer resp.Body.Close()
	if f, err := os.Create(path); err == nil {
		io.Copy(f, resp.Body)
		f.Close()
	}
}

// profileDuring runs load while it fetches a CPU profile of d from the server's pprof
// listener at addr (the load starts half a second before the profile and runs d plus a
// second), and writes the profile to path.
func profileDuring(addr string, d time.Duration, path string, load func()) error {
	done := make(chan struct{})
	go func() { defer close(done); load() }()
	time.Sleep(500 * time.Millisecond)
	secs := max(1, int(d.Seconds()))
	tr := make(chan error, 1)
	go func() { // an execution trace of 2 s from the middle of the phase
		time.Sleep(d / 2)
		tr <- fetchTo(fmt.Sprintf("http://%s/debug/pprof/trace?seconds=2", addr), strings.TrimSuffix(path, ".pprof")+".trace")
	}()
	// The load generator's own profile over the same seconds (<phase>.loadgen.pprof):
	// its CPU counts in the ratio too, as the heartbeat's does.
	lg, lerr := os.Create(strings.TrimSuffix(path, ".pprof") + ".loadgen.pprof")
	if lerr == nil {
		if lerr = pprof.StartCPUProfile(lg); lerr != nil {
			lg.Close()
		}
	}
	err := fetchTo(fmt.Sprintf("http://%s/debug/pprof/profile?seconds=%d", addr, secs), path)
	if lerr == nil {
		pprof.StopCPUProfile()
		lerr = lg.Close()
	}
	if terr := <-tr; err == nil {
		err = terr
	}
	if err == nil {
		err = lerr
	}
	<-done
	return err
}

// fetchTo writes the body of a GET of url to path.
func fetchTo(url, path string) error {
	resp, err := http.Get(url)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: %s", url, resp.Status)
	}
	if err = os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	_, err = io.Copy(f, resp.Body)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// profile takes the server CPU profiles of a heartbeat and a judge-action phase (fresh
// judges) into ProfileDir, each with the server's /metrics and cumulative allocation
// profiles before and after it.
func (b *bench) profile(ctx context.Context) error {
	cfg := b.cfg
	if err := os.MkdirAll(cfg.ProfileDir, 0o755); err != nil {
		return err
	}
	tokens, err := b.freshJudges(ctx, (cfg.Rounds+1)*cfg.Conns, cfg.Conns)
	if err != nil {
		return err
	}
	for _, ph := range []struct {
		name string
		run  func()
	}{
		{"heartbeat", func() { heartbeat(b.hc, b.url, cfg.Conns, cfg.ProfileFor+time.Second) }},
		{"judge", func() { judgeActions(b.hc, b.url, tokens, cfg.ProfileFor+time.Second) }},
	} {
		path := filepath.Join(cfg.ProfileDir, ph.name+".pprof")
		// Allocations (cumulative) before and after: go tool pprof -diff_base.
		allocs := filepath.Join(cfg.ProfileDir, ph.name+".allocs")
		saveMetrics(b.url, filepath.Join(cfg.ProfileDir, ph.name+".metrics.before"))
		if err := fetchTo(fmt.Sprintf("http://%s/debug/pprof/allocs", b.pprofAddr), allocs+".before"); err != nil {
			return err
		}
		if err := profileDuring(b.pprofAddr, cfg.ProfileFor, path, ph.run); err != nil {
			return fmt.Errorf("%s profile: %w", ph.name, err)
		}
		if err := fetchTo(fmt.Sprintf("http://%s/debug/pprof/allocs", b.pprofAddr), allocs); err != nil {
			return err
		}
		saveMetrics(b.url, filepath.Join(cfg.ProfileDir, ph.name+".metrics.after"))
		cfg.Log("server CPU profile of a %s phase: %s", ph.name, path)
	}
	return nil
}
