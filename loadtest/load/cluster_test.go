package load

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// proxyEnv makes the test binary run as a reverse proxy to the URL it names (see
// TestMain): a separate process in front of one real server, so that the tool sees
// several URLs and one of them can be SIGKILLed like a dead node.
const proxyEnv = "PODIUM_LOADTEST_PROXY_TO"

// runProxy serves a reverse proxy to target on a free loopback port and prints the URL.
func runProxy(target string) {
	u, err := url.Parse(target)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	fmt.Printf("proxy listening on http://%s\n", ln.Addr())
	os.Stdout.Sync()
	rp := httputil.NewSingleHostReverseProxy(u)
	rp.ErrorLog = nil
	_ = http.Serve(ln, rp)
	os.Exit(0)
}

type proxyProc struct {
	cmd *exec.Cmd
	url string
}

func startProxy(t *testing.T, target string) *proxyProc {
	t.Helper()
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), proxyEnv+"="+target)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &proxyProc{cmd: cmd}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "proxy listening on ") {
		t.Fatalf("proxy did not start: %q %v", line, err)
	}
	p.url = strings.TrimSpace(strings.TrimPrefix(line, "proxy listening on "))
	return p
}

// TestJudgesSpreadOverURLsAndMoveOnKill runs the tool with three URLs — three proxy
// processes in front of one real server — and -kill-pid on the third: the judges start
// round-robin on all three, those on the killed one move on after their first request
// without an answer, no acknowledged write is lost, and the write gap is reported.
func TestJudgesSpreadOverURLsAndMoveOnKill(t *testing.T) {
	bin := buildPodium(t)
	srv, err := newServerProc(bin, filepath.Join(t.TempDir(), "data"), filepath.Join(t.TempDir(), "server.log"), "spread-test-pw", "", "warn", nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := srv.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = srv.Stop(); srv.Close() }()
	var proxies []*proxyProc
	for i := 0; i < 3; i++ {
		proxies = append(proxies, startProxy(t, srv.URL()))
	}
	cfg := Config{
		URL: proxies[0].url, MoreURLs: []string{proxies[1].url, proxies[2].url}, AdminPassword: "spread-test-pw",
		Projects: 200, Judges: 9, Readers: 1, Duration: 4 * time.Second, Think: 30 * time.Millisecond, ClockInterval: -1,
		SampleInterval: time.Second, Seed: 5, Log: testLog(t),
		KillAfter: 1500 * time.Millisecond, KillPID: proxies[2].cmd.Process.Pid,
	}
	rep, err := Run(ctx, cfg)
	if err != nil {
		t.Fatalf("load run: %v", err)
	}
	var sb strings.Builder
	rep.Print(&sb)
	t.Log(sb.String())

	if rep.Server != strings.Join([]string{proxies[0].url, proxies[1].url, proxies[2].url}, ",") {
		t.Errorf("server = %q", rep.Server)
	}
	if len(rep.Nodes) != 3 {
		t.Fatalf("nodes = %+v", rep.Nodes)
	}
	for i, n := range rep.Nodes {
		if n.Judges != 3 || n.Requests == 0 {
			t.Errorf("node %d: %+v, want 3 judges at start and some requests", i, n)
		}
	}
	dead := rep.Nodes[2]
	if dead.NoAnswer == 0 || dead.MovedOut != 3 {
		t.Errorf("killed node: %+v, want requests without answer and its 3 judges moved away", dead)
	}
	if in := rep.Nodes[0].MovedIn + rep.Nodes[1].MovedIn; in != 3 {
		t.Errorf("judges moved in = %d, want 3", in)
	}
	if rep.Kill == nil || rep.Kill.Error != "" || rep.Kill.PID != proxies[2].cmd.Process.Pid || rep.Kill.AfterMs < 1500 {
		t.Errorf("kill report: %+v", rep.Kill)
	}
	g := rep.Gap
	if g.Succeeded == 0 || g.Failed == 0 || g.FirstFailureMs == nil || g.FailureToSuccessMs == nil || g.KillAtMs == nil || g.KillToSuccessMs == nil {
		t.Errorf("write gap: %+v", g)
	} else if *g.FirstFailureMs < *g.KillAtMs {
		t.Errorf("first failure at %.0f ms, before the kill at %.0f ms", *g.FirstFailureMs, *g.KillAtMs)
	}
	if !rep.Invariants.Checked || rep.Invariants.Violations != 0 {
		t.Errorf("invariants: %+v", rep.Invariants)
	}
	if rep.Failed() {
		t.Errorf("run failed: errors %v", rep.Errors)
	}
}

// TestWriteGapFromRecordedTimes checks the gap arithmetic on a recorded timeline: writes
// every 100 ms, a kill at 1 s, failures until 2.5 s, then success again.
func TestWriteGapFromRecordedTimes(t *testing.T) {
	ms := func(v int) time.Duration { return time.Duration(v) * time.Millisecond }
	var evs []writeEvent
	for at := 0; at < 1000; at += 100 { // acknowledged in 10 ms
		evs = append(evs, writeEvent{sent: ms(at), done: ms(at + 10), ok: true})
	}
	evs = append(evs,
		writeEvent{sent: ms(950), done: ms(1300), ok: true},  // in flight on a surviving node across the kill
		writeEvent{sent: ms(990), done: ms(1005)},            // in flight on the killed node
		writeEvent{sent: ms(1100), done: ms(1101)},           // refused
		writeEvent{sent: ms(1000), done: ms(2500)},           // 503 after waiting for a leader
		writeEvent{sent: ms(1200), done: ms(2600), ok: true}, // waited for the new leader
		writeEvent{sent: ms(2700), done: ms(2710), ok: true},
		writeEvent{sent: ms(2800), done: ms(2820), ok: true},
	)
	g := computeGap(evs, ms(3000), ms(1000), ms(1000))
	want := func(name string, got *float64, v float64) {
		t.Helper()
		if got == nil || *got != v {
			t.Errorf("%s = %v, want %v", name, got, v)
		}
	}
	if g.Succeeded != 14 || g.Failed != 3 || g.FailedAfterKill != 3 {
		t.Errorf("counts: %+v", g)
	}
	// acknowledgements at 910, 1300, 2600: the longest silence is 1300 -> 2600
	if g.LongestMs != 1300 || g.LongestFromMs != 1300 || g.LongestToMs != 2600 {
		t.Errorf("longest gap: %+v", g)
	}
	want("first failure", g.FirstFailureMs, 1005)
	want("failure to success", g.FailureToSuccessMs, 2600-1005) // the write sent at 1200
	want("kill at", g.KillAtMs, 1000)
	want("kill to success", g.KillToSuccessMs, 1600)

	// never recovered: the gap runs to the end of the phase, no success after the failure
	g = computeGap([]writeEvent{{sent: ms(0), done: ms(5), ok: true}, {sent: ms(10), done: ms(20)}}, ms(2000), -1, -1)
	if g.LongestMs != 1995 || g.FailureToSuccessMs != nil || g.KillAtMs != nil {
		t.Errorf("no recovery: %+v", g)
	}
	// nothing acknowledged at all
	g = computeGap([]writeEvent{{sent: ms(0), done: ms(30)}}, ms(2000), -1, -1)
	if g.LongestMs != 2000 || g.FirstFailureMs == nil || *g.FirstFailureMs != 30 {
		t.Errorf("nothing acknowledged: %+v", g)
	}
	// judges with nothing left to judge: the quiet end of the phase is not a gap, and
	// writes sent before the killed process was gone do not count as the recovery
	g = computeGap([]writeEvent{
		{sent: ms(0), done: ms(10), ok: true}, {sent: ms(400), done: ms(410), ok: true},
		{sent: ms(1002), done: ms(1020), ok: true}, // sent between the signal and the death
		{sent: ms(1300), done: ms(1350), ok: true},
	}, ms(5000), ms(1000), ms(1005))
	if g.LongestMs != 610 || g.KillToSuccessMs == nil || *g.KillToSuccessMs != 350 {
		t.Errorf("quiet end: %+v", g)
	}
}

// TestClusterSettingsChecked: combinations that cannot work are refused before anything
// starts.
func TestClusterSettingsChecked(t *testing.T) {
	for _, c := range []Config{
		{ClusterNodes: 3, Duration: time.Minute},
		{ServerBin: "x", ClusterNodes: 3, CrashCycles: 2, Duration: time.Minute},
		{URL: "http://x", KillLeader: true, KillAfter: time.Second, Duration: time.Minute},
		{URL: "http://x", KillAfter: time.Second, Duration: time.Minute},
		{URL: "http://x", KillPID: 1, KillAfter: time.Minute, Duration: time.Minute},
	} {
		if err := c.checkCluster(); err == nil {
			t.Errorf("%+v accepted", c)
		}
	}
	ok := Config{ServerBin: "x", ClusterNodes: 3, KillLeader: true, KillAfter: time.Second, Duration: time.Minute}
	if err := ok.checkCluster(); err != nil {
		t.Errorf("valid settings refused: %v", err)
	}
}
