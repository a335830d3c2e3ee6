// Package cluster is Podium's raft cluster node (hashicorp/raft): the FSM over the
// engine (fsm.go), the log store over the journal (log_store.go), the snapshot store
// over the Badger store (snapshot_store.go), the stable store, authenticated raft
// connections, forwarding to the leader and the membership routes. Node serves the
// same contract as the single node (persist.Node).
package cluster

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/raft"
	"github.com/rs/zerolog"

	"podium/engine"
	"podium/persist"
	"podium/persist/store"
)

// ErrNoLeader is returned for a change when the cluster has had no leader for 5 s
// (transport answers 503 with Retry-After: 1).
var ErrNoLeader = engine.ErrNoLeader

// Observer receives the raft measurements of docs/behaviour.md#cluster (implemented by package
// metrics).
type Observer interface {
	RaftState(state string)
	LeaderChanged()
	RaftIndexes(applied, commit uint64)
	Forwarded(outcome string)
}

type nopObserver struct{}

func (nopObserver) RaftState(string)           {}
func (nopObserver) LeaderChanged()             {}
func (nopObserver) RaftIndexes(uint64, uint64) {}
func (nopObserver) Forwarded(string)           {}

// leaderWait is how long a change waits for a leader before 503 (docs/behaviour.md#cluster).
const leaderWait = 5 * time.Second

// localApplyWait bounds how long a node waits to apply a change the leader committed.
const localApplyWait = 10 * time.Second

// Options configure a cluster node.
type Options struct {
	// Config is the cluster's settings (ParseConfig).
	Config *Config
	Log    zerolog.Logger
	// Observer receives the measurements of applies, log appends and snapshots;
	// RaftObserver those of raft itself. Either may be nil.
	Observer     persist.Observer
	RaftObserver Observer
	// SnapshotEvery is how many log entries raft gathers before it snapshots (default
	// 10,000).
	SnapshotEvery uint64
	// SegmentSize is the raft log's segment size (default 16 MiB).
	SegmentSize int64
	// JournalFault, when set, is consulted before every raft log write and allocation
	// from the start on (fault-injection tests of a full disk).
	JournalFault func() error
}

// Node is a member of a raft cluster: the engine is raft's FSM, changes go through the
// leader's log, and every node applies the committed log. It serves the same contract
// as the single node (persist.Node), plus the cluster's routes.
type Node struct {
	cfg    *Config
	dir    string
	core   *persist.Core
	eng    *engine.Engine // core.Engine()
	st     *store.Store   // raft snapshots (snapshot_store.go)
	fsm    *fsm
	r      *raft.Raft
	layer  *authLayer
	trans  *raft.NetworkTransport
	logs   *journalLog
	stable *fileStable
	obs    Observer
	secret []byte
	client *http.Client
	log    zerolog.Logger

	stampMu   sync.Mutex
	lastStamp int64

	ready atomic.Bool
	// dutiesTerm is the term in which this node, leading, has applied its whole log
	// from before (LeadsDuties); barrierTerm the term whose barrier is under way.
	dutiesTerm, barrierTerm atomic.Uint64
	closing                 atomic.Bool
	contacts                sync.Map      // node id -> time.Time of the last answered /healthz
	stopping                chan struct{} // closed when Close begins: waiting changes give up
	quit                    chan struct{} // closed once raft is down: the watcher stops
	done                    chan struct{}
	obsCh                   chan raft.Observation
	observer                *raft.Observer
	closeOnce               sync.Once
	shutdownMu              sync.Mutex

	noLeaderLog, appendFailLog rateLog
}

// rateLog lets a repeated log line through at most once a second, with the count of
// the ones held back.
type rateLog struct {
	at      atomic.Int64 // unix ns of the last line
	skipped atomic.Int64
}

func (c *Node) logLimited(r *rateLog, emit func(skipped int64)) {
	now := time.Now().UnixNano()
	last := r.at.Load()
	if now-last < int64(time.Second) || !r.at.CompareAndSwap(last, now) {
		r.skipped.Add(1)
		return
	}
	emit(r.skipped.Swap(0))
}

// watch updates metrics, readiness and reachability every second, and counts leader
// changes.
func (c *Node) watch() {
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
			c.leadDuties()
		case <-t.C:
			c.leadDuties()
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
func (c *Node) probe() {
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

func (c *Node) memberURLs() map[string]string {
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

// Submit commits a command through the leader and returns the result this node got
// when it applied it.
func (c *Node) Submit(ctx context.Context, actor engine.Actor, cmd engine.Command) (any, error) {
	return c.SubmitKeyed(ctx, actor, cmd, nil)
}

// SubmitKeyed is Submit for a judge write with an Idempotency-Key (k; nil: none): the
// key travels in the log entry, forwarded to the leader with it, and every node keeps
// the answer when it applies the entry (docs/behaviour.md#on-the-floor).
func (c *Node) SubmitKeyed(ctx context.Context, actor engine.Actor, cmd engine.Command, k *engine.Keyed) (any, error) {
	if c.closing.Load() {
		return nil, persist.ErrClosed
	}
	env := persist.NewEnvelope(actor, cmd)
	env.Keyed = k
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
	case <-c.stopping:
		return nil, persist.ErrClosed
	}
}

// commit gets e into the committed log: proposed locally on the leader, forwarded
// otherwise, retried (same request id) until a leader takes it or leaderWait passes.
// A result arriving on w meanwhile also ends it.
func (c *Node) commit(ctx context.Context, e *clusterEntry, w chan applyResult) error {
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
		case <-c.stopping:
			return persist.ErrClosed
		}
	}
}

func (c *Node) countForward(err error) {
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
func (c *Node) propose(e *clusterEntry) (uint64, error) {
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
		if err = raftErr(err); errors.Is(err, persist.ErrClosed) || errors.As(err, new(errRetry)) {
			return 0, err
		}
		// The log could not be written here (disk full, I/O error): raft steps down, so
		// the retry goes to whichever node leads next (the request id keeps it single).
		c.logLimited(&c.appendFailLog, func(skipped int64) {
			c.log.Error().Err(err).Int64("more", skipped).Msg("raft append failed")
		})
		return 0, errRetry{fmt.Errorf("%w: %v", persist.ErrReadOnly, err)}
	}
	return f.Index(), nil
}

// leaderURL returns the leader's id and HTTP base URL ("" when none is known).
func (c *Node) leaderURL() (string, string) {
	_, id := c.r.LeaderWithID()
	if id == "" {
		return "", ""
	}
	return string(id), c.fsm.memberURL(string(id))
}

// Ready reports whether the node accepts changes: a leader is known, this node has
// applied what was committed, and its log can be written.
func (c *Node) Ready() bool {
	return !c.logs.failed.Load() && !c.closing.Load() && c.ready.Load()
}

// Close hands leadership over when leading, stops raft and closes the log and the
// snapshot store.
func (c *Node) Close() error {
	var err error
	c.closeOnce.Do(func() {
		c.closing.Store(true)
		close(c.stopping)
		err = c.shutdown()
	})
	return err
}

func (c *Node) shutdown() error {
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
	if e := c.st.Close(); err == nil {
		err = e
	}
	c.client.CloseIdleConnections()
	return err
}

// SubmitWithBackup writes a backup of this node's state, then submits the (destructive)
// command. Commands committed by other nodes in between are in the backup's successors,
// not in it: the backup is "just before" as seen from this node.
func (c *Node) SubmitWithBackup(ctx context.Context, actor engine.Actor, cmd engine.Command) (any, string, error) {
	encode, seq := c.eng.Capture()
	name, err := persist.WriteBackup(c.dir, time.Now(), encode, seq, "pre-reset")
	if err != nil {
		c.log.Error().Err(err).Msg("backup before reset failed; reset refused")
		return nil, "", fmt.Errorf("backup before reset failed: %w", err)
	}
	res, err := c.Submit(ctx, actor, cmd)
	return res, name, err
}

// Snapshot takes a raft snapshot now (the log before it is then dropped as raft's
// TrailingLogs allows).
func (c *Node) Snapshot() error {
	err := c.r.Snapshot().Error()
	if err != nil && errors.Is(err, raft.ErrNothingNewToSnapshot) {
		return nil
	}
	return err
}

// appliedIndex is the last raft index this node has applied: commands (the FSM's own
// count) or raft's no-op and configuration entries, which never reach the FSM.
func (c *Node) appliedIndex() uint64 {
	return max(c.fsm.applied(), c.r.AppliedIndex())
}

// Backup writes a backup of this node's state and returns its file name.
func (c *Node) Backup() (string, error) {
	encode, seq := c.eng.Capture()
	return persist.WriteBackup(c.dir, time.Now(), encode, seq, "")
}

// BackupPath returns the path of a named backup in this node's backup directory.
func (c *Node) BackupPath(name string) (string, error) { return persist.BackupPath(c.dir, name) }

// Read runs fn under the engine's read lock.
func (c *Node) Read(fn func(s *engine.State)) { c.core.Read(fn) }

// TryRead is Read when the FSM does not hold the state right now; it reports whether
// fn ran.
func (c *Node) TryRead(fn func(s *engine.State)) bool { return c.core.TryRead(fn) }

// JudgeIDByTokenHash returns the judge whose session token hashes to hash (hex), without
// waiting for the FSM.
func (c *Node) JudgeIDByTokenHash(hash []byte) (engine.ID, bool) {
	return c.core.JudgeIDByTokenHash(hash)
}

// RatingInputsChanged is signalled when applied entries changed the ratings' inputs
// (persist.Core.RatingInputsChanged).
func (c *Node) RatingInputsChanged() <-chan struct{} { return c.core.RatingInputsChanged() }

// SetEventSink sets the function that receives the events of every applied command,
// whichever node took it. It is called from raft's apply goroutine and must not block.
func (c *Node) SetEventSink(fn func([]engine.Event)) { c.core.SetEventSink(fn) }

// SetApplyHook sets a function called after every command this node applies (its
// kind; "" after a snapshot replaced the whole state), on the apply goroutine: it must
// not block. Handlers use it to see changes that other nodes took.
func (c *Node) SetApplyHook(fn func(kind string)) { c.core.SetApplyHook(fn) }

// Failure is nil: a cluster node whose log cannot be written reports not-ready and
// leaves leading to another node instead of turning read-only.
func (c *Node) Failure() error { return nil }

// LeadsDuties reports whether this node runs the duties that act on their own (the
// ratings fit, the mail outbox): only while it leads, and once it has applied every
// entry of its log from before it led (a barrier of its term), so that a duty never
// acts on a state the log is still catching up on. The others apply the leader's
// results.
func (c *Node) LeadsDuties() bool {
	return c.r != nil && c.r.State() == raft.Leader && c.dutiesTerm.Load() == c.r.CurrentTerm()
}

// leadDuties starts, on a node that leads in a term whose barrier is not done yet, the
// barrier after which it leads the duties (LeadsDuties).
func (c *Node) leadDuties() {
	if c.r.State() != raft.Leader {
		return
	}
	term := c.r.CurrentTerm()
	if c.dutiesTerm.Load() == term || c.barrierTerm.Swap(term) == term {
		return // done, or under way
	}
	go func() {
		if c.r.Barrier(30*time.Second).Error() == nil && c.r.CurrentTerm() == term {
			c.dutiesTerm.Store(term)
			return
		}
		c.barrierTerm.CompareAndSwap(term, 0) // the next tick tries again, if it still leads
	}()
}
