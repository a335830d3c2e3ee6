package cluster

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"podium/persist/internal/disk"
	"sync"
)

// fileStable is raft's StableStore (current term, vote) in one small file that never
// needs new disk space: it is preallocated with two 4 KiB slots and each change is
// written in place to the older slot (crc32c | length | generation | JSON), then
// fdatasynced. Reading takes the valid slot with the higher generation, so a torn write
// leaves the previous state. Raft panics when it cannot store a new term, so a full
// disk must never make this store fail: nothing here allocates after the file exists.
//
// A vote is stored as one change (raft sets the vote's term, then its candidate: the
// term is held until the candidate arrives). While refuseSelfVote says so (the node's
// journal cannot be written), the node does not vote for itself: it cannot stand for
// election, because as leader it could not append anything and would step down at once.
type fileStable struct {
	path string
	f    *os.File

	mu       sync.Mutex
	kv       map[string][]byte
	gen      uint64
	voteTerm []byte // staged LastVoteTerm, written with LastVoteCand

	self           []byte      // this node's raft address (what it records voting for itself)
	refuseSelfVote func() bool // nil: never
}

const (
	stableSlot  = 4096
	stableHead  = 16
	keyVoteTerm = "LastVoteTerm"
	keyVoteCand = "LastVoteCand"
)

// errSelfVoteRefused: the node does not stand for election while its journal fails.
var errSelfVoteRefused = errors.New("raft stable store: no vote for this node while its journal cannot be written")

// errStableNotFound is what raft expects for a missing key ("not found" in the text).
var errStableNotFound = errors.New("not found")

// openFileStable opens (or creates) the store at path. A store of the earlier format
// (legacy, a JSON file replaced on every change) is read once and carried over.
func openFileStable(path, legacy string) (*fileStable, error) {
	s := &fileStable{path: path, kv: map[string][]byte{}}
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if errors.Is(err, os.ErrNotExist) {
		return s.create(legacy)
	}
	if err != nil {
		return nil, fmt.Errorf("raft stable store: %w", err)
	}
	s.f = f
	buf := make([]byte, 2*stableSlot)
	if _, err := f.ReadAt(buf, 0); err != nil {
		f.Close()
		return nil, fmt.Errorf("raft stable store %s: %w", path, err)
	}
	found := false
	for i := 0; i < 2; i++ {
		kv, gen, ok := decodeStableSlot(buf[i*stableSlot : (i+1)*stableSlot])
		if ok && (!found || gen > s.gen) {
			s.kv, s.gen, found = kv, gen, true
		}
	}
	if !found {
		f.Close()
		return nil, fmt.Errorf("raft stable store %s is damaged: neither copy checks out", path)
	}
	return s, nil
}

// create makes the preallocated file (through a temporary name, so a crash leaves
// either no store or a whole one) and fills it from the legacy file if there is one.
func (s *fileStable) create(legacy string) (*fileStable, error) {
	if legacy != "" {
		b, err := os.ReadFile(legacy)
		switch {
		case err == nil:
			if err := json.Unmarshal(b, &s.kv); err != nil {
				return nil, fmt.Errorf("raft stable store %s is damaged: %w", legacy, err)
			}
		case !errors.Is(err, os.ErrNotExist):
			return nil, fmt.Errorf("raft stable store: %w", err)
		}
	}
	tmp := s.path + ".new"
	f, err := os.OpenFile(tmp, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return nil, fmt.Errorf("raft stable store: %w", err)
	}
	s.f = f
	err = disk.Preallocate(f, 2*stableSlot)
	if err == nil {
		err = s.write() // slot 1, generation 1
	}
	if err == nil {
		err = os.Rename(tmp, s.path)
	}
	if err == nil {
		err = disk.SyncDir(filepath.Dir(s.path))
	}
	if err != nil {
		f.Close()
		os.Remove(tmp)
		return nil, fmt.Errorf("raft stable store: %w", err)
	}
	if legacy != "" {
		os.Remove(legacy)
	}
	return s, nil
}

func decodeStableSlot(b []byte) (map[string][]byte, uint64, bool) {
	n := int(binary.LittleEndian.Uint32(b[4:]))
	if n <= 0 || n > stableSlot-stableHead {
		return nil, 0, false
	}
	if crc32.Checksum(b[4:stableHead+n], disk.CRCTable) != binary.LittleEndian.Uint32(b) {
		return nil, 0, false
	}
	kv := map[string][]byte{}
	if json.Unmarshal(b[stableHead:stableHead+n], &kv) != nil {
		return nil, 0, false
	}
	return kv, binary.LittleEndian.Uint64(b[8:]), true
}

// write stores kv under the next generation in the older slot (caller holds mu).
func (s *fileStable) write() error {
	data, err := json.Marshal(s.kv)
	if err != nil {
		return err
	}
	if len(data) > stableSlot-stableHead {
		return fmt.Errorf("raft stable store: %d bytes do not fit a slot", len(data))
	}
	gen := s.gen + 1
	b := make([]byte, stableSlot)
	binary.LittleEndian.PutUint32(b[4:], uint32(len(data)))
	binary.LittleEndian.PutUint64(b[8:], gen)
	copy(b[stableHead:], data)
	binary.LittleEndian.PutUint32(b, crc32.Checksum(b[4:stableHead+len(data)], disk.CRCTable))
	if _, err := s.f.WriteAt(b, int64(gen%2)*stableSlot); err != nil {
		return fmt.Errorf("raft stable store: %w", err)
	}
	if err := disk.Fdatasync(s.f); err != nil {
		return fmt.Errorf("raft stable store: %w", err)
	}
	s.gen = gen
	return nil
}

func (s *fileStable) Set(key, val []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch string(key) {
	case keyVoteTerm:
		s.voteTerm = append([]byte(nil), val...)
		return nil
	case keyVoteCand:
		term := s.voteTerm
		s.voteTerm = nil
		if s.refuseSelfVote != nil && bytes.Equal(val, s.self) && s.refuseSelfVote() {
			return errSelfVoteRefused
		}
		oldTerm, hadTerm := s.kv[keyVoteTerm]
		oldCand, hadCand := s.kv[keyVoteCand]
		if term != nil {
			s.kv[keyVoteTerm] = term
		}
		s.kv[keyVoteCand] = append([]byte(nil), val...)
		if err := s.write(); err != nil {
			restore(s.kv, keyVoteTerm, oldTerm, hadTerm)
			restore(s.kv, keyVoteCand, oldCand, hadCand)
			return err
		}
		return nil
	}
	old, had := s.kv[string(key)]
	s.kv[string(key)] = append([]byte(nil), val...)
	if err := s.write(); err != nil {
		restore(s.kv, string(key), old, had)
		return err
	}
	return nil
}

func restore(kv map[string][]byte, key string, old []byte, had bool) {
	if had {
		kv[key] = old
	} else {
		delete(kv, key)
	}
}
func (s *fileStable) Get(key []byte) ([]byte, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	v, ok := s.kv[string(key)]
	if !ok {
		return nil, errStableNotFound
	}
	return append([]byte(nil), v...), nil
}

func (s *fileStable) SetUint64(key []byte, val uint64) error {
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], val)
	return s.Set(key, b[:])
}

func (s *fileStable) GetUint64(key []byte) (uint64, error) {
	v, err := s.Get(key)
	if err != nil {
		return 0, err
	}
	if len(v) != 8 {
		return 0, fmt.Errorf("raft stable store: %q is not a number", key)
	}
	return binary.BigEndian.Uint64(v), nil
}

// Close closes the file.
func (s *fileStable) Close() error { return s.f.Close() }
