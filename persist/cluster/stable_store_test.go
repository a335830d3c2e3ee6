package cluster

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

func TestFileStableRoundTripAndTornWrite(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "stable.dat")
	s, err := openFileStable(path, "")
	if err != nil {
		t.Fatal(err)
	}
	for term := uint64(1); term <= 5; term++ {
		if err := s.SetUint64([]byte("CurrentTerm"), term); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.SetUint64([]byte(keyVoteTerm), 5); err != nil {
		t.Fatal(err)
	}
	if err := s.Set([]byte(keyVoteCand), []byte("10.0.0.2:7000")); err != nil {
		t.Fatal(err)
	}
	s.Close()
	if fi, _ := os.Stat(path); fi.Size() != 2*stableSlot {
		t.Fatalf("file is %d bytes, want the preallocated %d", fi.Size(), 2*stableSlot)
	}
	s, err = openFileStable(path, "")
	if err != nil {
		t.Fatal(err)
	}
	if v, _ := s.GetUint64([]byte("CurrentTerm")); v != 5 {
		t.Fatalf("term %d after reopen, want 5", v)
	}
	if v, _ := s.GetUint64([]byte(keyVoteTerm)); v != 5 {
		t.Fatalf("vote term %d, want 5", v)
	}
	if _, err := s.Get([]byte("missing")); err == nil || err.Error() != "not found" {
		t.Fatalf("missing key: %v", err)
	}
	// A torn write of the newest slot leaves the state before it.
	if err := s.SetUint64([]byte("CurrentTerm"), 6); err != nil {
		t.Fatal(err)
	}
	newest := int64(s.gen%2) * stableSlot
	s.Close()
	f, _ := os.OpenFile(path, os.O_RDWR, 0)
	f.WriteAt([]byte{0xff, 0xff, 0xff}, newest+stableHead+2)
	f.Close()
	s, err = openFileStable(path, "")
	if err != nil {
		t.Fatal(err)
	}
	if v, _ := s.GetUint64([]byte("CurrentTerm")); v != 5 {
		t.Fatalf("term %d after a torn write of term 6, want 5", v)
	}
	// Both copies bad: refuse to start rather than forget a vote.
	s.Close()
	f, _ = os.OpenFile(path, os.O_RDWR, 0)
	f.WriteAt([]byte{1, 2, 3, 4}, 0)
	f.WriteAt([]byte{1, 2, 3, 4}, stableSlot)
	f.Close()
	if _, err := openFileStable(path, ""); err == nil {
		t.Fatal("a store with both copies damaged was opened")
	}
}

func TestFileStableMigratesJSONAndRefusesSelfVote(t *testing.T) {
	dir := t.TempDir()
	legacy := filepath.Join(dir, "stable.json")
	if err := os.WriteFile(legacy, []byte(`{"CurrentTerm":"AAAAAAAAAAc="}`), 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := openFileStable(filepath.Join(dir, "stable.dat"), legacy)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if v, _ := s.GetUint64([]byte("CurrentTerm")); v != 7 {
		t.Fatalf("migrated term %d, want 7", v)
	}
	if _, err := os.Stat(legacy); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("legacy file still there: %v", err)
	}
	failing := true
	s.self = []byte("127.0.0.1:7001")
	s.refuseSelfVote = func() bool { return failing }
	s.SetUint64([]byte(keyVoteTerm), 8)
	if err := s.Set([]byte(keyVoteCand), []byte("127.0.0.1:7001")); !errors.Is(err, errSelfVoteRefused) {
		t.Fatalf("self vote with a failing journal: %v, want refused", err)
	}
	if _, err := s.Get([]byte(keyVoteTerm)); err == nil {
		t.Fatal("the refused vote's term was stored")
	}
	// Votes for others still count, and the self vote once the journal works.
	s.SetUint64([]byte(keyVoteTerm), 8)
	if err := s.Set([]byte(keyVoteCand), []byte("127.0.0.1:7002")); err != nil {
		t.Fatal(err)
	}
	failing = false
	s.SetUint64([]byte(keyVoteTerm), 9)
	if err := s.Set([]byte(keyVoteCand), []byte("127.0.0.1:7001")); err != nil {
		t.Fatal(err)
	}
	if v, _ := s.GetUint64([]byte(keyVoteTerm)); v != 9 {
		t.Fatalf("vote term %d, want 9", v)
	}
}
