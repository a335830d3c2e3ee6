package cluster

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"podium/engine"
)

// An in-process three-node cluster (real raft over loopback, real journals, forwarding
// over HTTP), so the race detector sees the cluster code. The process-level guarantees
// are tested in cmd/podium/cluster_test.go.

type memberUnderTest struct {
	n    *Node
	cur  atomic.Pointer[Node] // the node the HTTP handlers use (nil while stopped)
	srv  *http.Server
	url  string
	dir  string
	opts Options
}

// stop closes the member's node (its HTTP server stays, answering 503).
func (m *memberUnderTest) stop(t *testing.T) {
	t.Helper()
	m.cur.Store(nil)
	if err := m.n.Close(); err != nil {
		t.Fatal(err)
	}
}

// start opens the member's node again on its data directory.
func (m *memberUnderTest) start(t *testing.T) {
	t.Helper()
	n, err := Open(m.dir, m.opts)
	if err != nil {
		t.Fatal(err)
	}
	m.n = n
	m.cur.Store(n)
}

func startInProcessCluster(t *testing.T, tune ...func(*Options)) []*memberUnderTest {
	t.Helper()
	var lns []net.Listener
	var peers []string
	raftPorts := make([]int, 3)
	for i := 0; i < 3; i++ {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		lns = append(lns, ln)
		rl, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		raftPorts[i] = rl.Addr().(*net.TCPAddr).Port
		rl.Close()
		peers = append(peers, fmt.Sprintf("n%d=127.0.0.1:%d=http://%s", i+1, raftPorts[i], ln.Addr()))
	}
	var out []*memberUnderTest
	for i := 0; i < 3; i++ {
		env := map[string]string{
			"NODE_ID": fmt.Sprintf("n%d", i+1), "RAFT_ADDR": fmt.Sprintf("127.0.0.1:%d", raftPorts[i]),
			"CLUSTER_PEERS": strings.Join(peers, ","), "CLUSTER_SECRET": strings.Repeat("z", 40),
		}
		cfg, err := ParseConfig(func(k string) string { return env[k] })
		if err != nil {
			t.Fatal(err)
		}
		m := &memberUnderTest{dir: t.TempDir(), url: "http://" + lns[i].Addr().String(),
			opts: Options{Log: zerolog.Nop(), Config: cfg, SegmentSize: 1 << 20}}
		for _, fn := range tune {
			fn(&m.opts)
		}
		m.start(t)
		mux := http.NewServeMux()
		mux.HandleFunc("POST "+ForwardPath, func(w http.ResponseWriter, r *http.Request) {
			n := m.cur.Load()
			if n == nil {
				w.WriteHeader(http.StatusServiceUnavailable)
				return
			}
			body, _ := io.ReadAll(r.Body)
			code, resp := n.HandleForward(r.Header.Get(ForwardAuthHeader), body)
			w.WriteHeader(code)
			_, _ = w.Write(resp)
		})
		mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
			if m.cur.Load() == nil {
				w.WriteHeader(http.StatusServiceUnavailable)
				return
			}
			_, _ = w.Write([]byte(`{"ok":1}`))
		})
		m.srv = &http.Server{Handler: mux}
		go func() { _ = m.srv.Serve(lns[i]) }()
		out = append(out, m)
	}
	t.Cleanup(func() {
		for _, m := range out {
			_ = m.srv.Close()
			_ = m.n.Close()
		}
	})
	return out
}

func waitUntil(t *testing.T, limit time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func newJudgeCmd(i int) engine.Command {
	return &engine.CreateJudges{
		Judges: []engine.NewJudge{{Name: fmt.Sprintf("Judge %d", i), Email: fmt.Sprintf("j%d@example.com", i)}},
		Codes:  []string{fmt.Sprintf("%08d", 20000000+i)},
	}
}

func digestsEqual(ms []*memberUnderTest) bool {
	var first StateDigest
	for i, m := range ms {
		st, err := m.n.ClusterStatus()
		if err != nil || st.StateDigest == nil {
			return false
		}
		if i == 0 {
			first = *st.StateDigest
		} else if *st.StateDigest != first {
			return false
		}
	}
	return true
}

func TestInProcessCluster(t *testing.T) {
	ms := startInProcessCluster(t)
	waitUntil(t, 20*time.Second, "all nodes ready", func() bool {
		return ms[0].n.Ready() && ms[1].n.Ready() && ms[2].n.Ready()
	})
	// Any node takes changes and answers with its own (typed) result.
	ctx := context.Background()
	for i := 0; i < 30; i++ {
		res, err := ms[i%3].n.Submit(ctx, engine.Admin, newJudgeCmd(i))
		if err != nil {
			t.Fatalf("submit on node %d: %v", i%3, err)
		}
		if cj, ok := res.([]engine.CreatedJudge); !ok || len(cj) != 1 {
			t.Fatalf("result %#v", res)
		}
		// Read your own write on the node that answered.
		found := false
		ms[i%3].n.Read(func(s *engine.State) {
			_, found = s.Judges[res.([]engine.CreatedJudge)[0].ID]
		})
		if !found {
			t.Fatal("the answering node does not show its own write")
		}
	}
	// A refused command is refused on the node that took it, with the engine's error.
	if _, err := ms[1].n.Submit(ctx, engine.Admin, newJudgeCmd(3)); err == nil {
		t.Fatal("duplicate email accepted")
	} else if ee := (*engine.Error)(nil); !errors.As(err, &ee) {
		t.Fatalf("refusal is %T %v, want *engine.Error", err, err)
	}
	waitUntil(t, 10*time.Second, "equal digests", func() bool { return digestsEqual(ms) })

	// The leader's raft log fails (a full disk): it steps down, is not ready, and the
	// others go on.
	var lead *memberUnderTest
	for _, m := range ms {
		if st, _ := m.n.ClusterStatus(); st.State == "leader" {
			lead = m
		}
	}
	if lead == nil {
		t.Fatal("no leader")
	}
	lead.n.logs.j.SetFault(func() error { return syscall.ENOSPC })
	var others []*memberUnderTest
	for _, m := range ms {
		if m != lead {
			others = append(others, m)
		}
	}
	// The first change makes the leader fail and step down; until the other two have
	// elected a leader (1-2 s, longer on a loaded machine) a change may get ErrNoLeader
	// after waiting 5 s, which a client retries (503 with Retry-After). Nothing but
	// ErrNoLeader is allowed, and the others must take every change within 30 s.
	// (ErrNoLeader can also mean "committed, not applied here yet": a retry of such a
	// change is refused as a duplicate email, and the count of 40 below says each
	// landed once.)
	deadline := time.Now().Add(30 * time.Second)
	for i := 100; i < 110; i++ {
		for retried := false; ; retried = true {
			_, err := others[i%2].n.Submit(ctx, engine.Admin, newJudgeCmd(i))
			if ee := (*engine.Error)(nil); err == nil || retried && errors.As(err, &ee) {
				break
			}
			if !errors.Is(err, ErrNoLeader) || time.Now().After(deadline) {
				t.Fatalf("submit while the old leader's disk is full: %v", err)
			}
			t.Logf("judge %d: %v (retrying)", i, err)
		}
	}
	waitUntil(t, 10*time.Second, "the full node reports not-ready", func() bool { return !lead.n.Ready() })
	lead.n.logs.j.SetFault(nil)
	waitUntil(t, 20*time.Second, "the healed node catches up", func() bool { return lead.n.Ready() && digestsEqual(ms) })
	judges := 0
	lead.n.Read(func(s *engine.State) { judges = len(s.Judges) })
	if judges != 40 {
		t.Fatalf("%d judges on the healed node, want 40", judges)
	}
}
