package cluster

// What the FSM keeps besides the engine: the request ids it applied (so a retried
// request applies once), the waiters for their results, the members' HTTP URLs, and
// the digest of the state.

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
)

// seenCap is how many recent request ids every node remembers (in the snapshot too), so
// a request retried after a lost answer is applied once.
const seenCap = 1 << 16

// errResultUnknown is returned to a waiting request whose command was applied through a
// snapshot install rather than one by one, so its result is not known here.
var errResultUnknown = fmt.Errorf("%w: the change was applied, but its result was not seen on this node; reload", ErrNoLeader)

type applyResult struct {
	res any
	err error
}

// addWaiter registers a request id whose result this node wants.
func (f *fsm) addWaiter(id string) chan applyResult {
	ch := make(chan applyResult, 1)
	f.waitMu.Lock()
	f.waiters[id] = ch
	f.waitMu.Unlock()
	return ch
}

func (f *fsm) dropWaiter(id string) {
	f.waitMu.Lock()
	delete(f.waiters, id)
	f.waitMu.Unlock()
}

func (f *fsm) deliver(id string, r applyResult) {
	f.waitMu.Lock()
	ch, ok := f.waiters[id]
	delete(f.waiters, id)
	f.waitMu.Unlock()
	if ok {
		ch <- r
	}
}

// applied returns the raft index of the last applied entry.
func (f *fsm) applied() uint64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.index
}

func (f *fsm) seenIndex(id string) (uint64, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	i, ok := f.seen[id]
	return i, ok
}

func (f *fsm) memberURL(id string) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.members[id]
}

func (f *fsm) remember(id string, index uint64) {
	if len(f.ring) < seenCap {
		f.ring = append(f.ring, id)
	} else {
		delete(f.seen, f.ring[f.ringPos])
		f.ring[f.ringPos] = id
		f.ringPos = (f.ringPos + 1) % seenCap
	}
	f.seen[id] = index
}

// StateDigest is the SHA-256 of the engine's encoding at a raft index.
type StateDigest struct {
	Index  uint64 `json:"index"`
	SHA256 string `json:"sha256"`
}

// digest hashes the state as of the last applied entry. Only the copy happens under
// the FSM lock.
func (f *fsm) digest() (StateDigest, error) {
	f.mu.Lock()
	idx, gen := f.index, f.restores
	if f.lastDigest.SHA256 != "" && f.lastDigest.Index == idx && f.lastDigestGen == gen {
		d := f.lastDigest
		f.mu.Unlock()
		return d, nil // nothing applied since: the dashboard polls this
	}
	encode, _ := f.core.Engine().Capture()
	f.mu.Unlock()
	h := sha256.New()
	bw := bufio.NewWriterSize(h, 64<<10)
	if err := encode(bw); err != nil {
		return StateDigest{}, err
	}
	if err := bw.Flush(); err != nil {
		return StateDigest{}, err
	}
	d := StateDigest{Index: idx, SHA256: hex.EncodeToString(h.Sum(nil))}
	f.mu.Lock()
	f.lastDigest, f.lastDigestGen = d, gen
	f.mu.Unlock()
	return d, nil
}
