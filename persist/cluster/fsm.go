package cluster

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/hashicorp/raft"
	"github.com/rs/zerolog"

	"podium/engine"
	"podium/persist"
	"podium/persist/internal/disk"
)

// clusterEntry is the data of one raft log entry: a stamped command with the request id
// that makes it idempotent, or the HTTP URL of a member (so every node can forward to
// any leader, including ones added later).
type clusterEntry struct {
	ReqID  string           `json:"r,omitempty"`
	Env    *engine.Envelope `json:"e,omitempty"`
	Member *clusterMember   `json:"m,omitempty"`
}

// decode decodes an entry as json.Unmarshal does, the envelope with the journal's hand
// decoder (engine.DecodeEnvelope: docs/behaviour.md#recovery-at-memory-speed).
func (e *clusterEntry) decode(b []byte) error {
	var w struct {
		ReqID  string          `json:"r"`
		Env    json.RawMessage `json:"e"`
		Member *clusterMember  `json:"m"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	*e = clusterEntry{ReqID: w.ReqID, Member: w.Member}
	if len(w.Env) > 0 && string(w.Env) != "null" {
		e.Env = new(engine.Envelope)
		return engine.DecodeEnvelope(w.Env, e.Env)
	}
	return nil
}

type clusterMember struct {
	ID      string `json:"id"`
	HTTPURL string `json:"http_url"`
}

// fsm is the engine as a raft.FSM. Apply runs on raft's FSM goroutine only; mu
// makes the engine state, index and request ids move together for captures.
type fsm struct {
	core *persist.Core
	log  zerolog.Logger

	mu      sync.Mutex
	index   uint64            // raft index of the last applied entry
	seen    map[string]uint64 // request id -> raft index
	ring    []string          // request ids in apply order (oldest evicted first)
	ringPos int               //
	members map[string]string // node id -> HTTP URL (replicated)
	// restores counts snapshot restores (a restore may keep the index); lastDigest
	// caches the digest of the state at lastDigest.Index.
	restores      uint64
	lastDigest    StateDigest
	lastDigestGen uint64

	waitMu  sync.Mutex
	waiters map[string]chan applyResult
}

func newFSM(core *persist.Core, log zerolog.Logger) *fsm {
	return &fsm{
		core: core, log: log, seen: make(map[string]uint64), members: make(map[string]string),
		waiters: make(map[string]chan applyResult),
	}
}

// Apply applies one committed entry. It is deterministic: every node gets the same
// state and events from the same log.
func (f *fsm) Apply(l *raft.Log) any {
	var e clusterEntry
	if err := e.decode(l.Data); err != nil {
		// Cannot happen for entries this code wrote; skip it the same way on every node.
		f.log.Error().Err(err).Uint64("index", l.Index).Msg("undecodable raft entry skipped")
		f.mu.Lock()
		f.index = l.Index
		f.mu.Unlock()
		return nil
	}
	var r applyResult
	var events []engine.Event
	deliver := false
	f.mu.Lock()
	switch {
	case e.Member != nil:
		f.members[e.Member.ID] = e.Member.HTTPURL
	case e.Env != nil && e.Env.Cmd != nil:
		if _, dup := f.seen[e.ReqID]; e.ReqID != "" && dup {
			break // a retried request that was already applied
		}
		f.core.Read(func(s *engine.State) {
			if e.Env.Time < s.LastTime {
				e.Env.Time = s.LastTime // command times never go back, whoever stamped them
			}
		})
		r.res, events, r.err = f.core.Apply(e.Env)
		if e.ReqID != "" {
			f.remember(e.ReqID, l.Index)
			deliver = true
		}
	}
	f.index = l.Index
	f.mu.Unlock()
	if deliver && r.err == nil {
		f.core.Applied(e.Env.Cmd.Kind())
	}
	if deliver {
		f.deliver(e.ReqID, r)
	}
	f.core.Emit(events)
	return nil
}

// fsmHeader is the first line of a raft snapshot, before the engine's encoding.
type fsmHeader struct {
	Index   uint64            `json:"index"`
	Seen    []string          `json:"seen"` // oldest first
	SeenIdx []uint64          `json:"seen_idx"`
	Members map[string]string `json:"members"`
}

// capture copies what a snapshot needs; the engine state is cloned, so encoding runs
// later on another goroutine (the FSM goroutine is held only for the copy).
func (f *fsm) capture() (fsmHeader, func(io.Writer) error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	h := fsmHeader{Index: f.index, Members: make(map[string]string, len(f.members))}
	for k, v := range f.members {
		h.Members[k] = v
	}
	n := len(f.ring)
	h.Seen, h.SeenIdx = make([]string, 0, n), make([]uint64, 0, n)
	for i := 0; i < n; i++ {
		id := f.ring[(f.ringPos+i)%n]
		h.Seen = append(h.Seen, id)
		h.SeenIdx = append(h.SeenIdx, f.seen[id])
	}
	encode, _ := f.core.Engine().Capture()
	return h, encode
}

// Snapshot captures the state; Persist streams it to raft's snapshot store.
func (f *fsm) Snapshot() (raft.FSMSnapshot, error) {
	h, encode := f.capture()
	return &fsmSnapshot{h: h, encode: encode, obs: f.core.Observer()}, nil
}

type fsmSnapshot struct {
	h      fsmHeader
	encode func(io.Writer) error
	obs    persist.Observer
}

func (s *fsmSnapshot) Persist(sink raft.SnapshotSink) error {
	t0 := time.Now()
	cw := &disk.CountingWriter{W: sink}
	bw := bufio.NewWriterSize(cw, 1<<20)
	hdr, err := json.Marshal(s.h)
	if err == nil {
		_, err = bw.Write(append(hdr, '\n'))
	}
	if err == nil {
		err = s.encode(bw)
	}
	if err == nil {
		err = bw.Flush()
	}
	if err != nil {
		_ = sink.Cancel()
		return fmt.Errorf("raft snapshot: %w", err)
	}
	if err := sink.Close(); err != nil {
		return err
	}
	s.obs.SnapshotWritten(cw.N, time.Since(t0))
	return nil
}

func (s *fsmSnapshot) Release() {}

// Restore replaces the whole state with a snapshot (install from the leader, or the
// latest local snapshot at start).
func (f *fsm) Restore(rc io.ReadCloser) error {
	defer rc.Close()
	br := bufio.NewReaderSize(rc, 1<<20)
	line, err := br.ReadBytes('\n')
	if err != nil {
		return fmt.Errorf("raft snapshot header: %w", err)
	}
	var h fsmHeader
	if err := json.Unmarshal(line, &h); err != nil {
		return fmt.Errorf("raft snapshot header: %w", err)
	}
	if len(h.Seen) != len(h.SeenIdx) {
		return errors.New("raft snapshot header: request ids and indexes differ in length")
	}
	body, err := io.ReadAll(br)
	if err != nil {
		return fmt.Errorf("raft snapshot: %w", err)
	}
	f.mu.Lock()
	if err := f.core.Engine().Restore(body); err != nil {
		f.mu.Unlock()
		return err
	}
	f.index = h.Index
	f.restores++
	f.members = h.Members
	if f.members == nil {
		f.members = make(map[string]string)
	}
	f.seen = make(map[string]uint64, len(h.Seen))
	f.ring, f.ringPos = f.ring[:0], 0
	for i, id := range h.Seen {
		f.remember(id, h.SeenIdx[i])
	}
	f.mu.Unlock()
	// Requests of this node that the snapshot covers will not be applied one by one.
	f.waitMu.Lock()
	var lost []string
	for id := range f.waiters {
		if _, ok := f.seen[id]; ok {
			lost = append(lost, id)
		}
	}
	f.waitMu.Unlock()
	for _, id := range lost {
		f.deliver(id, applyResult{err: errResultUnknown})
	}
	f.core.Applied("")
	return nil
}
