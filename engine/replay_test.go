package engine

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"testing"
)

func snapshotHash(t *testing.T, e *Engine) [32]byte {
	t.Helper()
	b, _, err := e.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	return sha256.Sum256(b)
}

// TestReplayGivesIdenticalState applies a recorded command sequence (encoded as the
// journal stores it) to a fresh engine and compares snapshot hashes. Refused commands
// are not recorded, exactly as the journal does.
func TestReplayGivesIdenticalState(t *testing.T) {
	live := New()
	var journal [][]byte
	apply := func(env *Envelope) {
		if _, _, err := live.Apply(env); err != nil {
			return
		}
		b, err := json.Marshal(env)
		if err != nil {
			t.Fatal(err)
		}
		journal = append(journal, b)
	}
	tm := int64(1_700_000_000_000)
	for i := 0; i < 50; i++ {
		tm += 1000
		apply(&Envelope{Time: tm, Seed: uint64(i) * 7919, Actor: Admin, Cmd: &CreateProjects{Projects: []NewProject{{Name: fmt.Sprint("p", i), ChallengeList: []string{"AI"}}}}})
		apply(&Envelope{Time: tm + 1, Seed: uint64(i) * 104729, Actor: Admin, Cmd: &CreateJudges{
			Judges: []NewJudge{{Name: fmt.Sprint("j", i), Email: fmt.Sprintf("j%d@x.org", i)}},
			Codes:  []string{fmt.Sprintf("%08d", i*31), fmt.Sprintf("%08d", i*37+1)},
			Mail:   i%2 == 0,
		}})
		if i%10 == 0 {
			apply(&Envelope{Time: tm + 2, Actor: Admin, Cmd: &ClockUnpause{}})
			apply(&Envelope{Time: tm + 3, Actor: Admin, Cmd: &AdminLogin{SessionHash: fmt.Sprintf("%064d", i)}})
		}
		// A refused command (duplicate email) changes nothing and is not recorded.
		apply(&Envelope{Time: tm + 4, Actor: Admin, Cmd: &CreateJudges{Judges: []NewJudge{{Name: "dup", Email: "j0@x.org"}}, Codes: []string{"99999999"}}})
	}
	if live.Applied() != uint64(len(journal)) {
		t.Fatalf("applied %d, journaled %d", live.Applied(), len(journal))
	}
	fresh := New()
	for i, rec := range journal {
		var env Envelope
		if err := json.Unmarshal(rec, &env); err != nil {
			t.Fatalf("decode record %d: %v", i, err)
		}
		if _, _, err := fresh.Apply(&env); err != nil {
			t.Fatalf("replay record %d: %v", i, err)
		}
	}
	if snapshotHash(t, live) != snapshotHash(t, fresh) {
		t.Fatal("replayed state differs from the live state")
	}
	// Restoring the snapshot gives the same state again (indexes rebuilt).
	b, _, _ := live.Snapshot()
	restored := New()
	if err := restored.Restore(b); err != nil {
		t.Fatal(err)
	}
	if snapshotHash(t, restored) != snapshotHash(t, live) {
		t.Fatal("snapshot restore differs")
	}
	restored.Read(func(s *State) {
		if _, ok := s.JudgeByCode(fmt.Sprintf("%08d", 5*31)); !ok {
			t.Fatal("code index not rebuilt after restore")
		}
	})
}

func TestRefusedCommandChangesNothing(t *testing.T) {
	e := New()
	e.Apply(&Envelope{Time: 1, Actor: Admin, Cmd: &CreateProjects{Projects: []NewProject{{Name: "a"}}}})
	before := snapshotHash(t, e)
	// The second project is invalid: the whole command is refused.
	_, _, err := e.Apply(&Envelope{Time: 2, Actor: Admin, Cmd: &CreateProjects{Projects: []NewProject{{Name: "ok"}, {Name: "bad", URL: "javascript:alert(1)"}}}})
	if err == nil {
		t.Fatal("invalid URL accepted")
	}
	if snapshotHash(t, e) != before {
		t.Fatal("refused command changed the state")
	}
}

func TestParseID(t *testing.T) {
	for _, s := range []string{"", "abc", "0123456789abcdef0123456G", "0123456789ABCDEF01234567", "0123456789abcdef012345678"} {
		if _, err := ParseID(s); err == nil {
			t.Errorf("ParseID(%q) accepted", s)
		}
	}
	id, err := ParseID("0123456789abcdef01234567")
	if err != nil || id.String() != "0123456789abcdef01234567" {
		t.Fatalf("round trip: %v %v", id, err)
	}
}
