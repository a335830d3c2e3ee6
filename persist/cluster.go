package persist

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"
	"github.com/rs/zerolog"

	"podium/engine"
	"podium/persist/store"
)

// ErrNoLeader is returned for a change when the cluster has had no leader for 5 s
// (transport answers 503 with Retry-After: 1).
var ErrNoLeader = engine.ErrNoLeader

// ClusterObserver receives the raft measurements of SPEC §8a (implemented by package
// metrics).
type ClusterObserver interface {
	RaftState(state string)
	LeaderChanged()
	RaftIndexes(applied, commit uint64)
	Forwarded(outcome string)
}

type nopClusterObserver struct{}

func (nopClusterObserver) RaftState(string)           {}
func (nopClusterObserver) LeaderChanged()             {}
func (nopClusterObserver) RaftIndexes(uint64, uint64) {}
func (nopClusterObserver) Forwarded(string)           {}

// leaderWait is how long a change waits for a leader before 503 (SPEC §8a).
const leaderWait = 5 * time.Second

// localApplyWait bounds how long a node waits to apply a change the leader committed.
const localApplyWait = 10 * time.Second

// cluster is the raft side of a Node in cluster mode: the engine is raft's FSM, changes
// go through the leader's log, and every node applies the committed log.
type cluster struct {
	cfg    *ClusterConfig
	n      *Node
	fsm    *clusterFSM
	r      *raft.Raft
	layer  *authLayer
	trans  *raft.NetworkTransport
	logs   *journalLog
	stable *fileStable
	obs    ClusterObserver
	secret []byte
	client *http.Client
	log    zerolog.Logger

	stampMu   sync.Mutex
	lastStamp int64

	ready      atomic.Bool
	contacts   sync.Map // node id -> time.Time of the last answered /healthz
	quit       chan struct{}
	done       chan struct{}
	obsCh      chan raft.Observation
	observer   *raft.Observer
	shutdownMu sync.Mutex

	noLeaderLog, appendFailLog rateLog
}

// rateLog lets a repeated log line through at most once a second, with the count of
// the ones held back.
type rateLog struct {
	at      atomic.Int64 // unix ns of the last line
	skipped atomic.Int64
}

func (c *cluster) logLimited(r *rateLog, emit func(skipped int64)) {
	now := time.Now().UnixNano()
	last := r.at.Load()
	if now-last < int64(time.Second) || !r.at.CompareAndSwap(last, now) {
		r.skipped.Add(1)
		return
	}
	emit(r.skipped.Swap(0))
}

// openCluster opens a Node in cluster mode: raft with the journal as its log.
func openCluster(dir string, opts Options) (*Node, error) {
	cfg := opts.Cluster
	n := &Node{
		dir: dir, eng: engine.New(), opts: opts, log: opts.Log,
		quit: make(chan struct{}), loopDone: make(chan struct{}), gcDone: make(chan struct{}),
	}
	obs := opts.ClusterObserver
	if obs == nil {
		obs = nopClusterObserver{}
	}
	c := &cluster{
		cfg: cfg, n: n, fsm: newClusterFSM(n), obs: obs, secret: []byte(cfg.Secret),
		log:    opts.Log.With().Str("component", "cluster").Logger(),
		client: &http.Client{Timeout: localApplyWait, Transport: &http.Transport{MaxIdleConnsPerHost: 64, IdleConnTimeout: time.Minute}},
		quit:   make(chan struct{}), done: make(chan struct{}),
	}
	n.cl = c
	for _, p := range cfg.Peers {
		c.fsm.members[p.ID] = p.HTTPURL
	}
	rdir := filepath.Join(dir, "raft")
	if err := os.MkdirAll(rdir, 0o700); err != nil {
		return nil, fmt.Errorf("create raft dir: %w", err)
	}
	var err error
	if c.logs, err = openRaftLog(filepath.Join(rdir, "log"), opts); err != nil {
		return nil, err
	}
	if c.stable, err = openFileStable(filepath.Join(rdir, "stable.dat"), filepath.Join(rdir, "stable.json")); err != nil {
		c.logs.Close()
		return nil, err
	}
	hlevel := hclog.Warn
	if opts.Log.GetLevel() <= zerolog.InfoLevel {
		hlevel = hclog.Info
	}
	hl := hclog.New(&hclog.LoggerOptions{Name: "raft", Level: hlevel, Output: c.log})
	// Raft snapshots live in the node's Badger store (cluster_snapshots.go), like a
	// single node's snapshots.
	if n.st, err = store.OpenForNode(dir, opts.Log); err != nil {
		c.logs.Close()
		return nil, err
	}
	failEarly := func(err error) (*Node, error) {
		c.logs.Close()
		n.st.Close()
		return nil, err
	}
	snaps, err := openRaftSnapshots(n.st, filepath.Join(rdir, "snapshots"), hl, c.log)
	if err != nil {
		return failEarly(err)
	}
	var tlsCfg *tls.Config
	if cfg.TLSCert != "" {
		if tlsCfg, err = loadRaftTLS(cfg.TLSCert, cfg.TLSKey, cfg.TLSCA); err != nil {
			return failEarly(err)
		}
	}
	if c.layer, err = newAuthLayer(cfg.RaftAddr, cfg.RaftAdvertise, c.secret, tlsCfg, c.log); err != nil {
		return failEarly(err)
	}
	c.trans = raft.NewNetworkTransportWithConfig(&raft.NetworkTransportConfig{
		Stream: c.layer, MaxPool: 3, Timeout: 10 * time.Second, Logger: hl,
	})
	// A node whose journal cannot be written does not vote for itself (it would step
	// down at its first append); a probe write tells when the disk is back.
	c.stable.self = []byte(c.trans.LocalAddr())
	c.stable.refuseSelfVote = func() bool {
		if !c.logs.failed.Load() {
			return false
		}
		if c.logs.j.Probe() == nil {
			c.logs.failed.Store(false)
			return false
		}
		return true
	}
	rc := raft.DefaultConfig()
	rc.LocalID = raft.ServerID(cfg.NodeID)
	rc.Logger = hl
	rc.MaxAppendEntries = 512
	rc.BatchApplyCh = true
	// Raft snapshots once SnapshotEvery (10,000) entries have gathered, looking every
	// 30-60 s; it keeps TrailingLogs entries after a snapshot for followers that lag.
	rc.SnapshotThreshold = opts.SnapshotEvery
	rc.SnapshotInterval = 30 * time.Second
	rc.TrailingLogs = 10240
	if cfg.TrailingLogs > 0 {
		rc.TrailingLogs = cfg.TrailingLogs
	}
	fail := func(err error) (*Node, error) {
		c.trans.Close()
		return failEarly(err)
	}
	existing, err := raft.HasExistingState(c.logs, c.stable, snaps)
	if err != nil {
		return fail(fmt.Errorf("raft state: %w", err))
	}
	if !existing {
		if _, self := cfg.peer(cfg.NodeID); self {
			var conf raft.Configuration
			for _, p := range cfg.Peers {
				conf.Servers = append(conf.Servers, raft.Server{Suffrage: raft.Voter, ID: raft.ServerID(p.ID), Address: raft.ServerAddress(p.RaftAddr)})
			}
			if err := raft.BootstrapCluster(rc, c.logs, c.stable, snaps, c.trans, conf); err != nil {
				return fail(fmt.Errorf("bootstrap the cluster: %w", err))
			}
		}
	}
	if c.r, err = raft.NewRaft(rc, c.fsm, c.logs, c.stable, snaps, c.trans); err != nil {
		return fail(fmt.Errorf("start raft: %w", err))
	}
	c.obsCh = make(chan raft.Observation, 16)
	c.observer = raft.NewObserver(c.obsCh, false, func(o *raft.Observation) bool {
		_, ok := o.Data.(raft.LeaderObservation)
		return ok
	})
	c.r.RegisterObserver(c.observer)
	go c.watch()
	if opts.Ratings { // fitted on the leader only (ratingsLoop); every node applies the result
		n.ratingsDone = make(chan struct{})
		go n.ratingsLoop()
	}
	c.log.Info().Str("node_id", cfg.NodeID).Str("raft_addr", cfg.RaftAdvertise).Bool("existing_state", existing).Msg("cluster node started")
	return n, nil
}

// watch updates metrics, readiness and reachability every second, and counts leader
// changes.
func (c *cluster) watch() {
	defer close(c.done)
	t := time.NewTicker(time.Second)
	defer t.Stop()
	var prevCommit uint64
	first := true
	for {
		select {
		case <-c.quit:
			return
		case <-c.obsCh:
			c.obs.LeaderChanged()
		case <-t.C:
			applied, commit := c.appliedIndex(), c.r.CommitIndex()
			c.obs.RaftState(stateName(c.r.State()))
			c.obs.RaftIndexes(applied, commit)
			_, leader := c.r.LeaderWithID()
			// Ready: a leader is known and this node has applied what was committed a
			// second ago (under load the commit index runs a little ahead of apply).
			caughtUp := applied >= commit || (!first && applied >= prevCommit)
			c.ready.Store(leader != "" && caughtUp)
			prevCommit, first = commit, false
			c.probe()
		}
	}
}

// probe checks every other member's /healthz in the background (reachable, last contact).
func (c *cluster) probe() {
	for id, url := range c.memberURLs() {
		if id == c.cfg.NodeID {
			continue
		}
		go func() {
			ctx, cancel := context.WithTimeout(context.Background(), 900*time.Millisecond)
			defer cancel()
			req, err := http.NewRequestWithContext(ctx, http.MethodGet, url+"/healthz", nil)
			if err != nil {
				return
			}
			resp, err := c.client.Do(req)
			if err != nil {
				return
			}
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				c.contacts.Store(id, time.Now())
			}
		}()
	}
}

func (c *cluster) memberURLs() map[string]string {
	c.fsm.mu.Lock()
	defer c.fsm.mu.Unlock()
	out := make(map[string]string, len(c.fsm.members))
	for k, v := range c.fsm.members {
		out[k] = v
	}
	return out
}

func stateName(s raft.RaftState) string {
	switch s {
	case raft.Leader:
		return "leader"
	case raft.Candidate:
		return "candidate"
	case raft.Follower:
		return "follower"
	}
	return "shutdown"
}

func newRequestID() string {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic("crypto/rand failed: " + err.Error())
	}
	return hex.EncodeToString(b[:])
}

// errRetry marks a failure worth retrying (no leader, leadership lost, leader
// unreachable): the request id makes the retry safe.
type errRetry struct{ err error }

func (e errRetry) Error() string { return e.err.Error() }
func (e errRetry) Unwrap() error { return e.err }

// submit commits a command through the leader and returns the result this node got
// when it applied it.
func (c *cluster) submit(ctx context.Context, actor engine.Actor, cmd engine.Command) (any, error) {
	if c.n.closing.Load() {
		return nil, ErrClosed
	}
	env := &engine.Envelope{Actor: actor, Cmd: cmd, Seed: randomSeed()}
	id := newRequestID()
	w := c.fsm.addWaiter(id)
	defer c.fsm.dropWaiter(id)
	e := clusterEntry{ReqID: id, Env: env}
	if err := c.commit(ctx, &e, w); err != nil {
		return nil, err
	}
	// Committed: wait until this node has applied it too (read your own writes).
	t := time.NewTimer(localApplyWait)
	defer t.Stop()
	select {
	case r := <-w:
		return r.res, r.err
	case <-t.C:
		return nil, fmt.Errorf("%w: the change is committed but this node has not applied it yet", ErrNoLeader)
	case <-c.n.quit:
		return nil, ErrClosed
	}
}

// commit gets e into the committed log: proposed locally on the leader, forwarded
// otherwise, retried (same request id) until a leader takes it or leaderWait passes.
// A result arriving on w meanwhile also ends it.
func (c *cluster) commit(ctx context.Context, e *clusterEntry, w chan applyResult) error {
	deadline := time.Now().Add(leaderWait)
	var last error
	for {
		var err error
		if c.r.State() == raft.Leader {
			_, err = c.propose(e)
		} else {
			_, err = c.forward(ctx, forwardRequest{Op: "apply", Entry: e})
			c.countForward(err)
		}
		if err == nil {
			return nil
		}
		var rt errRetry
		if !errors.As(err, &rt) {
			return err
		}
		last = err
		if time.Now().After(deadline) {
			c.logLimited(&c.noLeaderLog, func(skipped int64) {
				c.log.Warn().Err(last).Int64("more", skipped).Msg("change refused: no leader for 5 s")
			})
			return ErrNoLeader
		}
		select {
		case r := <-w:
			w <- r // committed after all: let submit take it
			return nil
		case <-time.After(100 * time.Millisecond):
		case <-ctx.Done():
			return ctx.Err()
		case <-c.n.quit:
			return ErrClosed
		}
	}
}

func (c *cluster) countForward(err error) {
	var rt errRetry
	switch {
	case err == nil:
		c.obs.Forwarded("ok")
	case errors.As(err, &rt):
		c.obs.Forwarded("retry")
	default:
		c.obs.Forwarded("error")
	}
}

// propose stamps and appends e on the leader and waits until it is committed and
// applied here. A request id already applied is not proposed again.
func (c *cluster) propose(e *clusterEntry) (uint64, error) {
	if e.ReqID != "" {
		if idx, ok := c.fsm.seenIndex(e.ReqID); ok {
			return idx, nil
		}
	}
	if e.Env != nil {
		c.stampMu.Lock()
		now := time.Now().UnixMilli()
		if now < c.lastStamp {
			now = c.lastStamp
		}
		c.lastStamp = now
		e.Env.Time = now
		c.stampMu.Unlock()
	}
	data, err := json.Marshal(e)
	if err != nil {
		return 0, fmt.Errorf("encode raft entry: %w", err)
	}
	f := c.r.Apply(data, leaderWait)
	if err := f.Error(); err != nil {
		if err = raftErr(err); errors.Is(err, ErrClosed) || errors.As(err, new(errRetry)) {
			return 0, err
		}
		// The log could not be written here (disk full, I/O error): raft steps down, so
		// the retry goes to whichever node leads next (the request id keeps it single).
		c.logLimited(&c.appendFailLog, func(skipped int64) {
			c.log.Error().Err(err).Int64("more", skipped).Msg("raft append failed")
		})
		return 0, errRetry{fmt.Errorf("%w: %v", ErrReadOnly, err)}
	}
	return f.Index(), nil
}

// leaderURL returns the leader's id and HTTP base URL ("" when none is known).
func (c *cluster) leaderURL() (string, string) {
	_, id := c.r.LeaderWithID()
	if id == "" {
		return "", ""
	}
	return string(id), c.fsm.memberURL(string(id))
}

func (c *cluster) isReady() bool {
	return !c.logs.failed.Load() && !c.n.closing.Load() && c.ready.Load()
}

// close hands leadership over when leading, stops raft and closes the log.
func (c *cluster) close() error {
	c.shutdownMu.Lock()
	defer c.shutdownMu.Unlock()
	if c.r.State() == raft.Leader {
		if err := c.r.LeadershipTransfer().Error(); err != nil {
			c.log.Warn().Err(err).Msg("leadership transfer before shutdown")
		}
	}
	err := c.r.Shutdown().Error()
	c.r.DeregisterObserver(c.observer)
	close(c.quit)
	<-c.done
	_ = c.trans.Close()
	_ = c.stable.Close()
	if e := c.logs.Close(); err == nil {
		err = e
	}
	if e := c.n.st.Close(); err == nil {
		err = e
	}
	c.client.CloseIdleConnections()
	return err
}

// submitWithBackup writes a backup of this node's state, then submits the (destructive)
// command. Commands committed by other nodes in between are in the backup's successors,
// not in it: the backup is "just before" as seen from this node.
func (c *cluster) submitWithBackup(ctx context.Context, actor engine.Actor, cmd engine.Command) (any, string, error) {
	encode, seq := c.n.eng.Capture()
	name, err := c.n.writeBackup(encode, seq, "pre-reset")
	if err != nil {
		c.log.Error().Err(err).Msg("backup before reset failed; reset refused")
		return nil, "", fmt.Errorf("backup before reset failed: %w", err)
	}
	res, err := c.submit(ctx, actor, cmd)
	return res, name, err
}

// snapshot takes a raft snapshot now (the log before it is then dropped as raft's
// TrailingLogs allows).
func (c *cluster) snapshot() error {
	err := c.r.Snapshot().Error()
	if err != nil && errors.Is(err, raft.ErrNothingNewToSnapshot) {
		return nil
	}
	return err
}

// appliedIndex is the last raft index this node has applied: commands (the FSM's own
// count) or raft's no-op and configuration entries, which never reach the FSM.
func (c *cluster) appliedIndex() uint64 {
	return max(c.fsm.applied(), c.r.AppliedIndex())
}
