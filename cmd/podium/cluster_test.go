package main

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"podium/persist/cluster"
)

// A three-node cluster of real processes on loopback (docs/behaviour.md#cluster guarantees).

const (
	clusterSecret = "cluster-test-secret-0123456789abcdef"
	clusterAPIKey = "cluster-test-api-key"
)

type clusterNode struct {
	id       string
	raftPort int
	httpPort int
	dir      string
	p        *proc
}

func (n *clusterNode) url() string { return fmt.Sprintf("http://127.0.0.1:%d", n.httpPort) }

type testCluster struct {
	t     *testing.T
	nodes []*clusterNode
	peers string
}

var clusterHTTP = &http.Client{Timeout: 8 * time.Second}

// freePorts returns n free loopback ports below the ephemeral range, so that outgoing
// connections cannot take the port of a node while it is being restarted.
func freePorts(t *testing.T, n int) []int {
	t.Helper()
	var out []int
	for len(out) < n {
		p := 20000 + rand.IntN(12000)
		l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", p))
		if err != nil {
			continue
		}
		l.Close()
		if !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	return out
}

func newTestCluster(t *testing.T) *testCluster {
	return startTestCluster(t, freePorts(t, 6))
}

// startTestCluster starts three nodes on ports[0:3] (raft) and ports[3:6] (HTTP), each
// with the extra environment settings given.
func startTestCluster(t *testing.T, ports []int, extra ...string) *testCluster {
	c := &testCluster{t: t}
	var peers []string
	for i := 0; i < 3; i++ {
		n := &clusterNode{id: fmt.Sprintf("node%d", i+1), raftPort: ports[i], httpPort: ports[3+i], dir: t.TempDir()}
		c.nodes = append(c.nodes, n)
		peers = append(peers, fmt.Sprintf("%s=127.0.0.1:%d=%s", n.id, n.raftPort, n.url()))
	}
	c.peers = strings.Join(peers, ",")
	for _, n := range c.nodes {
		c.start(n, extra...)
	}
	return c
}

// clusterWithLeader starts a three-node cluster and waits for its leader; it returns
// the cluster, the leader and a follower.
func clusterWithLeader(t *testing.T) (c *testCluster, lead, follower *clusterNode) {
	t.Helper()
	c = newTestCluster(t)
	waitFor(t, 20*time.Second, "a leader", func() bool { lead = c.leader(c.nodes); return lead != nil })
	return c, lead, without(c.nodes, lead)[0]
}

func (c *testCluster) start(n *clusterNode, extra ...string) {
	env := []string{
		fmt.Sprintf("PORT=%d", n.httpPort), "NODE_ID=" + n.id, fmt.Sprintf("RAFT_ADDR=127.0.0.1:%d", n.raftPort),
		"CLUSTER_PEERS=" + c.peers, "CLUSTER_SECRET=" + clusterSecret,
		"RAFT_TRAILING_LOGS=64", // so that a node far behind needs a snapshot install
		"PUBLIC_API_KEY=" + clusterAPIKey,
	}
	n.p = startBinary(c.t, n.dir, append(env, extra...)...)
}

// call sends an admin request to a node (no retries).
func call(base, method, path string, body any) (int, []byte, error) {
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, _ := http.NewRequest(method, base+path, rd)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Basic "+base64.StdEncoding.EncodeToString([]byte("admin:"+killPassword)))
	resp, err := clusterHTTP.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, b, err
}

type clusterStatus struct {
	NodeID       string `json:"node_id"`
	State        string `json:"state"`
	LeaderID     string `json:"leader_id"`
	Term         uint64 `json:"term"`
	CommitIndex  uint64 `json:"commit_index"`
	AppliedIndex uint64 `json:"applied_index"`
	LeadsDuties  bool   `json:"leads_duties"`
	Nodes        []struct {
		ID    string `json:"id"`
		Voter bool   `json:"voter"`
	} `json:"nodes"`
	StateDigest struct {
		Index  uint64 `json:"index"`
		SHA256 string `json:"sha256"`
	} `json:"state_digest"`
}

func status(n *clusterNode) (clusterStatus, error) {
	var st clusterStatus
	code, b, err := call(n.url(), "GET", "/api/admin/cluster", nil)
	if err != nil {
		return st, err
	}
	if code != 200 {
		return st, fmt.Errorf("status %d: %s", code, b)
	}
	return st, json.Unmarshal(b, &st)
}

// waitFor polls cond every 100 ms until it holds or limit passes.
func waitFor(t *testing.T, limit time.Duration, what string, cond func() bool) time.Duration {
	t.Helper()
	start := time.Now()
	for !cond() {
		if time.Since(start) > limit {
			t.Fatalf("timed out after %s waiting for %s", limit, what)
		}
		time.Sleep(100 * time.Millisecond)
	}
	return time.Since(start)
}

// leader returns the node every live node names as leader.
func (c *testCluster) leader(live []*clusterNode) *clusterNode {
	var id string
	for _, n := range live {
		st, err := status(n)
		if err != nil || st.LeaderID == "" || (id != "" && st.LeaderID != id) {
			return nil
		}
		id = st.LeaderID
	}
	for _, n := range c.nodes {
		if n.id == id {
			return n
		}
	}
	return nil
}

// converged reports whether the live nodes show the same digest at the same index.
func converged(live []*clusterNode) (bool, string) {
	var first clusterStatus
	for i, n := range live {
		st, err := status(n)
		if err != nil {
			return false, err.Error()
		}
		if i == 0 {
			first = st
			continue
		}
		if st.StateDigest != first.StateDigest {
			return false, fmt.Sprintf("%s at %d %.8s, %s at %d %.8s", first.NodeID, first.StateDigest.Index, first.StateDigest.SHA256,
				st.NodeID, st.StateDigest.Index, st.StateDigest.SHA256)
		}
	}
	return true, ""
}

func (c *testCluster) waitConverged(live []*clusterNode, limit time.Duration) time.Duration {
	c.t.Helper()
	var why string
	start := time.Now()
	for {
		ok, w := converged(live)
		if ok {
			return time.Since(start)
		}
		why = w
		if time.Since(start) > limit {
			c.t.Fatalf("nodes did not converge within %s: %s", limit, why)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func without(nodes []*clusterNode, x *clusterNode) []*clusterNode {
	var out []*clusterNode
	for _, n := range nodes {
		if n != x {
			out = append(out, n)
		}
	}
	return out
}

// load creates projects on the given nodes from several goroutines, moving to the next
// node when one does not answer (as a load balancer would), and records every
// acknowledged creation with its time.
type load struct {
	mu     sync.Mutex
	acked  map[string]string // id -> name
	by     map[string]string // id -> node that acknowledged it
	ackAt  []time.Time
	failed int
	stop   chan struct{}
	wg     sync.WaitGroup
}

func startLoad(nodes []*clusterNode, workers int) *load {
	l := &load{acked: map[string]string{}, by: map[string]string{}, stop: make(chan struct{})}
	for w := 0; w < workers; w++ {
		l.wg.Add(1)
		go func(w int) {
			defer l.wg.Done()
			target := w % len(nodes)
			for i := 0; ; i++ {
				select {
				case <-l.stop:
					return
				default:
				}
				name := fmt.Sprintf("w%d-%d", w, i)
				code, b, err := call(nodes[target].url(), "POST", "/api/project/new", map[string]any{"name": name})
				if err != nil || code != 200 {
					l.mu.Lock()
					l.failed++
					l.mu.Unlock()
					target = (target + 1) % len(nodes)
					time.Sleep(20 * time.Millisecond)
					continue
				}
				var res struct{ ID string }
				_ = json.Unmarshal(b, &res)
				l.mu.Lock()
				l.acked[res.ID] = name
				l.by[res.ID] = nodes[target].id
				l.ackAt = append(l.ackAt, time.Now())
				l.mu.Unlock()
			}
		}(w)
	}
	return l
}

func (l *load) end() {
	close(l.stop)
	l.wg.Wait()
}

// gapAfter is the longest time without an acknowledgement from at on (the last
// acknowledgement before at included).
func (l *load) gapAfter(at time.Time) time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	ts := append([]time.Time(nil), l.ackAt...)
	sort.Slice(ts, func(i, j int) bool { return ts[i].Before(ts[j]) })
	gap := time.Duration(-1)
	for i := 1; i < len(ts); i++ {
		if ts[i].After(at) && ts[i].Sub(ts[i-1]) > gap {
			gap = ts[i].Sub(ts[i-1])
		}
	}
	return gap
}

// checkAcked fails unless every acknowledged project is on node n.
func checkAcked(t *testing.T, n *clusterNode, l *load) {
	t.Helper()
	code, b, err := call(n.url(), "GET", "/api/project/list", nil)
	if err != nil || code != 200 {
		t.Fatalf("%s project list: %d %v", n.id, code, err)
	}
	var projects []struct{ ID, Name string }
	_ = json.Unmarshal(b, &projects)
	have := map[string]string{}
	for _, p := range projects {
		have[p.ID] = p.Name
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	var lost []string
	for id, name := range l.acked {
		if have[id] != name {
			lost = append(lost, fmt.Sprintf("%s %q (acknowledged by %s)", id, name, l.by[id]))
		}
	}
	if len(lost) > 0 {
		t.Fatalf("%s lost %d of %d acknowledged creations: %s", n.id, len(lost), len(l.acked), strings.Join(lost, "; "))
	}
}

func TestCluster(t *testing.T) {
	c := newTestCluster(t)
	all := c.nodes
	var lead *clusterNode
	waitFor(t, 20*time.Second, "a leader known to all nodes", func() bool { lead = c.leader(all); return lead != nil })
	waitFor(t, 10*time.Second, "all nodes ready", func() bool {
		for _, n := range all {
			if code, _, err := call(n.url(), "GET", "/readyz", nil); err != nil || code != 200 {
				return false
			}
		}
		return true
	})
	before, _ := status(lead)

	t.Run("a node with the wrong secret changes nothing", func(t *testing.T) {
		ports := freePorts(t, 2)
		evil := &clusterNode{id: "node4", raftPort: ports[0], httpPort: ports[1], dir: c.t.TempDir()}
		peers := c.peers + fmt.Sprintf(",node4=127.0.0.1:%d=%s", evil.raftPort, evil.url())
		// It bootstraps a configuration that includes itself and campaigns for votes.
		evil.p = startBinary(t, evil.dir, fmt.Sprintf("PORT=%d", evil.httpPort), "NODE_ID=node4",
			fmt.Sprintf("RAFT_ADDR=127.0.0.1:%d", evil.raftPort), "CLUSTER_PEERS="+peers,
			"CLUSTER_SECRET=wrong-secret-wrong-secret-wrong-secret")
		// A forwarded change with a forged MAC is refused.
		req, _ := http.NewRequest("POST", lead.url()+"/api/cluster/forward", strings.NewReader(`{"op":"add","member":{"ID":"node4"}}`))
		req.Header.Set("X-Podium-Cluster", fmt.Sprintf("%d.%s", time.Now().UnixMilli(), strings.Repeat("ab", 32)))
		resp, err := clusterHTTP.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized {
			t.Fatalf("forged forward: %d, want 401", resp.StatusCode)
		}
		time.Sleep(4 * time.Second) // several election timeouts of the intruder
		es, err := status(evil)
		if err != nil {
			t.Fatal(err)
		}
		if es.LeaderID != "" {
			t.Fatalf("the intruder found a leader: %+v", es)
		}
		for _, n := range all {
			st, err := status(n)
			if err != nil {
				t.Fatal(err)
			}
			if st.LeaderID != before.LeaderID || st.Term != before.Term || len(st.Nodes) != 3 {
				t.Fatalf("%s changed: leader %s term %d nodes %d (before: %s %d)", n.id, st.LeaderID, st.Term, len(st.Nodes), before.LeaderID, before.Term)
			}
		}
		evil.p.kill()
		refused := false
		for _, n := range all {
			n.p.mu.Lock()
			refused = refused || strings.Contains(n.p.out.String(), "refused a raft connection")
			n.p.mu.Unlock()
		}
		if !refused {
			t.Fatal("no node logged a refused raft connection: the intruder never tried?")
		}
	})

	var l *load
	t.Run("leader SIGKILL under load loses no acknowledged change", func(t *testing.T) {
		l = startLoad(all, 6)
		time.Sleep(1500 * time.Millisecond)
		killedAt := time.Now()
		lead.p.kill()
		live := without(all, lead)
		var newLead *clusterNode
		waitFor(t, 15*time.Second, "a new leader", func() bool { newLead = c.leader(live); return newLead != nil && newLead != lead })
		// Writes succeed again through the survivors.
		waitFor(t, 15*time.Second, "acknowledged writes after the kill", func() bool {
			l.mu.Lock()
			defer l.mu.Unlock()
			return len(l.ackAt) > 0 && l.ackAt[len(l.ackAt)-1].After(killedAt.Add(500*time.Millisecond))
		})
		time.Sleep(time.Second)
		l.end()
		gap := l.gapAfter(killedAt)
		t.Logf("acknowledged %d creations (%d refused or failed); write gap around the leader kill: %s; new leader %s",
			len(l.acked), l.failed, gap.Round(time.Millisecond), newLead.id)
		if gap < 0 || gap > 10*time.Second {
			t.Fatalf("write gap %s", gap)
		}
		// A node answers once it has applied its own writes; the others' writes reach it
		// as it catches up.
		c.waitConverged(live, 15*time.Second)
		for _, n := range live {
			checkAcked(t, n, l)
		}
	})

	t.Run("the killed node restarts with its data and catches up", func(t *testing.T) {
		c.start(lead)
		took := c.waitConverged(all, 20*time.Second)
		t.Logf("restarted %s caught up in %s", lead.id, took.Round(time.Millisecond))
		checkAcked(t, lead, l)
	})

	t.Run("a SIGSTOPped follower catches up after SIGCONT", func(t *testing.T) {
		var cur *clusterNode
		waitFor(t, 15*time.Second, "a leader", func() bool { cur = c.leader(all); return cur != nil })
		f := without(all, cur)[0]
		if err := f.p.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
			t.Fatal(err)
		}
		stopped := true
		defer func() {
			if stopped {
				_ = f.p.cmd.Process.Signal(syscall.SIGCONT)
			}
		}()
		for i := 0; i < 100; i++ {
			if code, b, err := call(cur.url(), "POST", "/api/project/new", map[string]any{"name": fmt.Sprint("while stopped ", i)}); err != nil || code != 200 {
				t.Fatalf("write while a follower is stopped: %d %v %s", code, err, b)
			}
		}
		time.Sleep(10 * time.Second) // docs/behaviour.md#cluster: stopped for 10 s
		_ = f.p.cmd.Process.Signal(syscall.SIGCONT)
		stopped = false
		took := c.waitConverged(all, 15*time.Second)
		t.Logf("%s caught up %s after SIGCONT", f.id, took.Round(time.Millisecond))
	})

	t.Run("a node removed and re-added with an empty data dir catches up", func(t *testing.T) {
		var cur *clusterNode
		waitFor(t, 15*time.Second, "a leader", func() bool { cur = c.leader(all); return cur != nil })
		f := without(all, cur)[1]
		other := without(without(all, cur), f)[0]
		// Membership changes go through the leader from any node.
		if code, b, err := call(other.url(), "DELETE", "/api/admin/cluster/nodes/"+f.id, nil); err != nil || code != 200 {
			t.Fatalf("remove %s: %d %v %s", f.id, code, err, b)
		}
		f.p.kill()
		if err := os.RemoveAll(f.dir); err != nil {
			t.Fatal(err)
		}
		f.dir = c.t.TempDir() // the parent's: it must outlive this subtest
		for i := 0; i < 100; i++ {
			if code, b, err := call(cur.url(), "POST", "/api/project/new", map[string]any{"name": fmt.Sprint("while removed ", i)}); err != nil || code != 200 {
				t.Fatalf("write with two nodes: %d %v %s", code, err, b)
			}
		}
		// A snapshot on the leader drops all but 64 entries of its log: the new node
		// must be brought up to date by a snapshot install.
		if code, b, err := call(cur.url(), "POST", "/api/admin/clock/backup", nil); err != nil || code != 200 {
			t.Fatalf("snapshot: %d %v %s", code, err, b)
		}
		if code, b, err := call(other.url(), "POST", "/api/admin/cluster/nodes",
			map[string]any{"id": f.id, "raft_addr": fmt.Sprintf("127.0.0.1:%d", f.raftPort), "http_url": f.url()}); err != nil || code != 200 {
			t.Fatalf("re-add %s: %d %v %s", f.id, code, err, b)
		}
		c.start(f)
		took := c.waitConverged(all, 20*time.Second)
		t.Logf("re-added %s with an empty data dir caught up in %s", f.id, took.Round(time.Millisecond))
		checkAcked(t, f, l)
		// The installed snapshot is in the node's Badger store (read once it has
		// stopped), and the node restarts from it with its data.
		if err := f.p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		if err := f.p.cmd.Wait(); err != nil {
			t.Fatalf("%s exited with %v after SIGTERM", f.id, err)
		}
		snaps, err := cluster.RaftSnapshots(f.dir)
		if err != nil {
			t.Fatal(err)
		}
		if len(snaps) == 0 {
			t.Fatal("the re-added node caught up without a snapshot install")
		}
		if _, err := os.Stat(filepath.Join(f.dir, "raft", "snapshots")); !os.IsNotExist(err) {
			t.Fatalf("raft's file snapshot directory exists (%v): snapshots belong in Badger", err)
		}
		c.start(f)
		c.waitConverged(all, 20*time.Second)
		st, _ := status(f)
		if len(st.Nodes) != 3 {
			t.Fatalf("%s sees %d nodes", f.id, len(st.Nodes))
		}
	})

	t.Run("a backup restored on the leader replaces the state of every node", func(t *testing.T) {
		var cur *clusterNode
		waitFor(t, 15*time.Second, "a leader", func() bool { cur = c.leader(all); return cur != nil })
		// The backed-up ratings are current: no fit lands between the backup and the
		// list read below, and the check after the restore stores nothing.
		waitFor(t, 30*time.Second, "current ratings on the leader", func() bool {
			_, m, _ := call(cur.url(), "GET", "/metrics", nil)
			return bytes.Contains(m, []byte("\npodium_ratings_pending_changes 0\n"))
		})
		code, b, err := call(cur.url(), "POST", "/api/admin/backup", nil)
		if err != nil || code != 200 {
			t.Fatalf("backup: %d %v %s", code, err, b)
		}
		var bk struct{ Backup string }
		_ = json.Unmarshal(b, &bk)
		_, list, _ := call(cur.url(), "GET", "/api/project/list", nil)
		for i := 0; i < 5; i++ {
			if code, b, err := call(without(all, cur)[0].url(), "POST", "/api/project/new", map[string]any{"name": fmt.Sprint("after backup ", i)}); err != nil || code != 200 {
				t.Fatalf("write: %d %v %s", code, err, b)
			}
		}
		if code, b, err := call(without(all, cur)[0].url(), "POST", "/api/admin/cluster/restore", map[string]any{"backup": bk.Backup}); err != nil || code != 409 {
			t.Fatalf("restore on a follower: %d %v %s, want 409", code, err, b)
		}
		if code, b, err := call(cur.url(), "POST", "/api/admin/cluster/restore", map[string]any{"backup": bk.Backup}); err != nil || code != 200 {
			cur.p.mu.Lock()
			defer cur.p.mu.Unlock()
			t.Fatalf("restore: %d %v %s\n%s", code, err, b, cur.p.out.String())
		}
		c.waitConverged(all, 20*time.Second)
		for _, n := range all {
			if _, got, _ := call(n.url(), "GET", "/api/project/list", nil); !bytes.Equal(got, list) {
				t.Fatalf("%s does not hold the backed-up projects", n.id)
			}
		}
		// Judging goes on from the restored state.
		if code, b, err := call(without(all, cur)[1].url(), "POST", "/api/project/new", map[string]any{"name": "after restore"}); err != nil || code != 200 {
			for _, n := range all {
				n.p.mu.Lock()
				t.Logf("%s:\n%s", n.id, n.p.out.String())
				n.p.mu.Unlock()
			}
			t.Fatalf("write after restore: %d %v %s", code, err, b)
		}
		c.waitConverged(all, 10*time.Second)
	})

	t.Run("logins and content changed through one node show on every node", func(t *testing.T) {
		publicFAQ := func(n *clusterNode) string {
			req, _ := http.NewRequest("GET", n.url()+"/v1/public/faq", nil)
			req.Header.Set("X-API-Key", clusterAPIKey)
			resp, err := clusterHTTP.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			b, _ := io.ReadAll(resp.Body)
			return string(b)
		}
		for _, n := range all {
			publicFAQ(n) // every node caches the (empty) FAQ
		}
		if code, b, err := call(all[0].url(), "POST", "/api/admin/content/faq", map[string]any{"question": "Where is lunch?", "answer": "Hall B"}); err != nil || code != 200 {
			t.Fatalf("create FAQ: %d %v %s", code, err, b)
		}
		if code, b, err := call(all[1].url(), "POST", "/api/judge/new", map[string]any{"name": "Replicated Judge", "email": "rj@example.com", "no_send": true}); err != nil || code != 200 {
			t.Fatalf("create judge: %d %v %s", code, err, b)
		}
		c.waitConverged(all, 10*time.Second)
		var judges []struct{ Name, Code string }
		_, b, _ := call(all[2].url(), "GET", "/api/judge/list", nil)
		_ = json.Unmarshal(b, &judges)
		code := ""
		for _, j := range judges {
			if j.Name == "Replicated Judge" {
				code = j.Code
			}
		}
		// The judge logs in on one node and uses the session on the others.
		st, b, err := call(all[2].url(), "POST", "/api/judge/login", map[string]string{"code": code})
		if err != nil || st != 200 {
			t.Fatalf("judge login: %d %v %s", st, err, b)
		}
		var login struct{ Token string }
		_ = json.Unmarshal(b, &login)
		c.waitConverged(all, 10*time.Second)
		for _, n := range all {
			req, _ := http.NewRequest("GET", n.url()+"/api/judge", nil)
			req.Header.Set("Authorization", "Bearer "+login.Token)
			resp, err := clusterHTTP.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != 200 {
				t.Fatalf("%s refuses a session made on %s: %d", n.id, all[2].id, resp.StatusCode)
			}
			if got := publicFAQ(n); !strings.Contains(got, "Hall B") {
				t.Fatalf("%s serves a stale FAQ: %s", n.id, got)
			}
		}
	})

	t.Run("SIGTERM on the leader hands leadership over and exits 0", func(t *testing.T) {
		var cur *clusterNode
		waitFor(t, 15*time.Second, "a leader", func() bool { cur = c.leader(all); return cur != nil })
		start := time.Now()
		if err := cur.p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- cur.p.cmd.Wait() }()
		select {
		case err := <-done:
			if err != nil {
				t.Fatalf("%s exited with %v", cur.id, err)
			}
		case <-time.After(20 * time.Second):
			t.Fatalf("%s did not exit within 20 s of SIGTERM", cur.id)
		}
		live := without(all, cur)
		var next *clusterNode
		waitFor(t, 15*time.Second, "a new leader", func() bool { next = c.leader(live); return next != nil })
		if code, b, err := call(live[0].url(), "POST", "/api/project/new", map[string]any{"name": "after SIGTERM"}); err != nil || code != 200 {
			t.Fatalf("write after the leader stopped: %d %v %s", code, err, b)
		}
		t.Logf("%s stopped in %s; %s leads", cur.id, time.Since(start).Round(time.Millisecond), next.id)
	})
}
