package load

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	mrand "math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"podium/loadtest/client"
	"podium/loadtest/server"
)

// Cluster mode of the tool: with ClusterNodes > 0 and a server binary it starts that
// many Podium nodes on loopback as one cluster (docs/behaviour.md#cluster settings: NODE_ID, RAFT_ADDR,
// CLUSTER_PEERS, CLUSTER_SECRET), spreads the judges over them, and can SIGKILL the
// leader (or any process by pid) during the measured phase.

// KillReport says which failure the tool injected.
type KillReport struct {
	AfterMs float64 `json:"after_ms"`      // into the measured phase
	DeadMs  float64 `json:"dead_after_ms"` // when the process was seen gone
	Target  string  `json:"target"`        // "leader" or "pid"
	PID     int     `json:"pid"`
	Node    string  `json:"node,omitempty"` // URL of the killed node, when known
	Error   string  `json:"error,omitempty"`
}

// clusterStatus is the part of GET /api/admin/cluster the tool reads.
type clusterStatus struct {
	NodeID       string `json:"node_id"`
	State        string `json:"state"`
	LeaderID     string `json:"leader_id"`
	Term         uint64 `json:"term"`
	CommitIndex  uint64 `json:"commit_index"`
	AppliedIndex uint64 `json:"applied_index"`
	Nodes        []struct {
		ID      string `json:"id"`
		HTTPURL string `json:"http_url"`
	} `json:"nodes"`
}

// clusterStatusOf is GET /api/admin/cluster.
func clusterStatusOf(ctx context.Context, c *client.Client) (clusterStatus, error) {
	var st clusterStatus
	err := c.Do(ctx, "GET", "/api/admin/cluster", "/api/admin/cluster", client.AsAdmin, nil, &st)
	return st, err
}

// managedNode is one node of a cluster the tool started.
type managedNode struct {
	id  string
	url string
	p   *server.Process
}

// freeLoopbackPorts returns n ports that can be bound now, chosen below the kernel's
// ephemeral range: the nodes dial each other while they start, and an outgoing
// connection may take any ephemeral port, including one picked by listening on :0.
func freeLoopbackPorts(n int) ([]int, error) {
	low := 32768
	if b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range"); err == nil {
		if f := strings.Fields(string(b)); len(f) == 2 {
			if v, err := strconv.Atoi(f[0]); err == nil && v > 12000 {
				low = v
			}
		}
	}
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			l.Close()
		}
	}()
	out := make([]int, 0, n)
	for tries := 0; len(out) < n && tries < 1000; tries++ {
		port := 10000 + mrand.IntN(low-10000)
		l, err := net.Listen("tcp", fmt.Sprintf(":%d", port))
		if err != nil {
			continue
		}
		ls = append(ls, l)
		out = append(out, port)
	}
	if len(out) < n {
		return nil, errors.New("no free ports below the ephemeral range")
	}
	return out, nil
}

// startCluster starts cfg.ClusterNodes nodes under fresh data directories, waits until
// they have a leader and are ready, and returns them with a cleanup func.
func (r *runner) startCluster(ctx context.Context) ([]*managedNode, func(), error) {
	n := r.cfg.ClusterNodes
	root := r.cfg.DataDir
	tmp := ""
	if root == "" {
		var err error
		if tmp, err = os.MkdirTemp("", "podium-loadtest-cluster-*"); err != nil {
			return nil, nil, err
		}
		root = tmp
	}
	if r.cfg.AdminPassword == "" {
		r.cfg.AdminPassword = "loadtest-" + client.RunID()
	}
	secret := make([]byte, 24)
	if _, err := rand.Read(secret); err != nil {
		return nil, nil, err
	}
	ports, err := freeLoopbackPorts(2 * n)
	if err != nil {
		return nil, nil, err
	}
	nodes := make([]*managedNode, n)
	for i := range nodes {
		nodes[i] = &managedNode{id: fmt.Sprintf("node%d", i+1), url: fmt.Sprintf("http://127.0.0.1:%d", ports[n+i])}
	}
	cleanup := func() {
		r.stopNodes(nodes)
		if tmp != "" {
			os.RemoveAll(tmp)
		}
	}
	if err := r.prepareNodes(root, nodes, ports, secret); err != nil {
		cleanup()
		return nil, nil, err
	}
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i, nd := range nodes { // together: a node may wait for its peers before it listens
		wg.Add(1)
		go func() { defer wg.Done(); errs[i] = nd.p.Start(ctx) }()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		cleanup()
		return nil, nil, err
	}
	for _, nd := range nodes {
		r.cfg.Log("started %s %s (pid %d) on %s, data %s", nd.id, r.cfg.ServerBin, nd.p.PID(), nd.url, nd.p.Dir())
	}
	if err := r.waitLeader(ctx, nodes, 30*time.Second); err != nil {
		cleanup()
		return nil, nil, err
	}
	return nodes, cleanup, nil
}

// prepareNodes prepares a server process for every node, each on its own data directory
// under root, with the cluster's settings: the node's id, raft address (ports[i]) and
// HTTP port (ports[len(nodes)+i]), the peers and the shared secret.
func (r *runner) prepareNodes(root string, nodes []*managedNode, ports []int, secret []byte) error {
	n := len(nodes)
	var peers []string
	for i, nd := range nodes {
		peers = append(peers, fmt.Sprintf("%s=127.0.0.1:%d=%s", nd.id, ports[i], nd.url))
	}
	logs := []string{}
	for i, nd := range nodes {
		dir := filepath.Join(root, nd.id)
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return err
		}
		if i == 0 {
			r.rep.Machine.FsyncProbe = fsyncProbe(dir, 200)
		}
		logPath := filepath.Join(os.TempDir(), fmt.Sprintf("podium-loadtest-%s-%s.log", client.RunID(), nd.id))
		if r.cfg.ServerLog != "" {
			logPath = r.cfg.ServerLog + "." + nd.id
		}
		logs = append(logs, logPath)
		env := append([]string{
			"NODE_ID=" + nd.id, fmt.Sprintf("RAFT_ADDR=127.0.0.1:%d", ports[i]), fmt.Sprintf("PORT=%d", ports[n+i]),
			"CLUSTER_PEERS=" + strings.Join(peers, ","), "CLUSTER_SECRET=" + hex.EncodeToString(secret),
		}, r.cfg.ServerEnv...)
		p, err := newServerProc(r.cfg.ServerBin, dir, logPath, r.cfg.AdminPassword, r.cfg.APIKey, r.cfg.ServerLogLevel, env)
		if err != nil {
			return err
		}
		nd.p = p
	}
	r.rep.ServerLog = strings.Join(logs, ",")
	return nil
}

// stopNodes stops every started node (SIGTERM, together) and closes its log.
func (r *runner) stopNodes(nodes []*managedNode) {
	var wg sync.WaitGroup
	for _, nd := range nodes {
		if nd.p == nil {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := nd.p.Stop(); err != nil {
				r.note("%s: %v", nd.id, err)
			}
			nd.p.Close()
		}()
	}
	wg.Wait()
}

// waitLeader waits until every node answers /readyz and reports the same leader.
func (r *runner) waitLeader(ctx context.Context, nodes []*managedNode, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	var last error
	for time.Now().Before(deadline) && ctx.Err() == nil {
		leader, err := r.leaderOf(ctx, nodes)
		if err == nil && leader != nil {
			ready := true
			for _, nd := range nodes {
				c := client.New(nd.url, r.cfg.AdminPassword, client.NewHostClient(nd.url, 2, 5*time.Second), nil)
				if c.Do(ctx, "GET", "/readyz", "/readyz", client.AsAnon, nil, nil) != nil {
					ready = false
				}
			}
			if ready {
				return nil
			}
		}
		last = err
		time.Sleep(100 * time.Millisecond)
	}
	return fmt.Errorf("the cluster has no leader with every node ready after %s (last: %v); does the binary support cluster mode (docs/behaviour.md#cluster)?", limit, last)
}

// leaderOf asks the live nodes for the leader; nil when none is known.
func (r *runner) leaderOf(ctx context.Context, nodes []*managedNode) (*managedNode, error) {
	var last error
	for _, nd := range nodes {
		if nd.p.Exited() {
			continue
		}
		c := client.New(nd.url, r.cfg.AdminPassword, client.NewHostClient(nd.url, 2, 5*time.Second), nil)
		st, err := clusterStatusOf(ctx, c)
		if err != nil {
			last = err
			continue
		}
		if st.State == "standalone" {
			return nil, errors.New("GET /api/admin/cluster says standalone: the cluster settings were not applied")
		}
		for _, x := range nodes {
			if x.id == st.LeaderID && !x.p.Exited() {
				return x, nil
			}
		}
	}
	return nil, last
}

// killer SIGKILLs the target cfg.KillAfter into the measured phase (unless stop closes
// first) and reports when.
func (r *runner) killer(stop <-chan struct{}, start time.Time, out *KillReport, killedURL *string) {
	if !sleepOr(stop, r.cfg.KillAfter) {
		return
	}
	ctx := context.Background()
	switch {
	case r.cfg.KillPID > 0:
		out.Target, out.PID = "pid", r.cfg.KillPID
		out.AfterMs = msOf(time.Since(start))
		if err := syscall.Kill(r.cfg.KillPID, syscall.SIGKILL); err != nil {
			out.Error = err.Error()
			return
		}
		for t := time.Now(); server.Alive(r.cfg.KillPID) && time.Since(t) < 5*time.Second; {
			time.Sleep(time.Millisecond)
		}
		out.DeadMs = msOf(time.Since(start))
	case r.cfg.KillLeader && len(r.cluster) > 0:
		out.Target = "leader"
		leader, err := r.leaderOf(ctx, r.cluster)
		if leader == nil {
			out.Error = fmt.Sprintf("no leader known: %v", err)
			return
		}
		out.PID, out.Node = leader.p.PID(), leader.url
		out.AfterMs = msOf(time.Since(start))
		leader.p.Kill() // returns once the process is reaped
		out.DeadMs = msOf(time.Since(start))
		*killedURL = leader.url
	default:
		return
	}
	r.cfg.Log("killed %s (pid %d) %s %.1fs into the load", out.Target, out.PID, out.Node, out.AfterMs/1000)
}

// caughtUp waits (up to limit) until the admin node has applied every index a live node
// reports committed, so that the final checks read a state that holds every
// acknowledged write. Outside cluster mode it returns at once.
func (r *runner) caughtUp(ctx context.Context, limit time.Duration) {
	if len(r.urls) < 2 {
		return
	}
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) {
		self, err := clusterStatusOf(ctx, r.admin)
		if err != nil || self.State == "standalone" || self.State == "" {
			return
		}
		var top uint64
		for _, u := range r.urls {
			c := client.New(u, r.cfg.AdminPassword, client.NewHostClient(u, 2, 2*time.Second), nil)
			if st, err := clusterStatusOf(ctx, c); err == nil && st.CommitIndex > top {
				top = st.CommitIndex
			}
		}
		if self.AppliedIndex >= top {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	r.note("the node used for the final checks had not applied every committed change after %s", limit)
}
