package persist

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
)

// fileStable is raft's StableStore (current term, vote) in one small file, replaced
// atomically and fsynced on every change (a vote must survive a crash).
type fileStable struct {
	path string
	mu   sync.Mutex
	kv   map[string][]byte
}

func openFileStable(path string) (*fileStable, error) {
	s := &fileStable{path: path, kv: map[string][]byte{}}
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return s, nil
	}
	if err != nil {
		return nil, fmt.Errorf("raft stable store: %w", err)
	}
	if err := json.Unmarshal(b, &s.kv); err != nil {
		return nil, fmt.Errorf("raft stable store %s is damaged: %w", path, err)
	}
	return s, nil
}

// errStableNotFound is what raft expects for a missing key ("not found" in the text).
var errStableNotFound = errors.New("not found")

func (s *fileStable) Set(key, val []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.kv[string(key)] = append([]byte(nil), val...)
	return s.save()
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

// save writes the map to a temporary file, fsyncs it, renames it over the old one and
// fsyncs the directory (caller holds mu).
func (s *fileStable) save() error {
	b, err := json.Marshal(s.kv)
	if err != nil {
		return err
	}
	dir := filepath.Dir(s.path)
	tmp, err := os.CreateTemp(dir, ".stable-*")
	if err != nil {
		return fmt.Errorf("raft stable store: %w", err)
	}
	defer os.Remove(tmp.Name())
	_, err = tmp.Write(b)
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), s.path)
	}
	if err != nil {
		return fmt.Errorf("raft stable store: %w", err)
	}
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync()
		d.Close()
	}
	return nil
}
