package engine

import (
	"fmt"
	"sync"
	"testing"
)

// TestTokenMirrorFollowsIndex: the lock-free token lookup answers what the state's
// index answers (judge deleted, logged out or logged in again included), through
// logins, logouts, deletions, a reset and a restore from a snapshot.
func TestTokenMirrorFollowsIndex(t *testing.T) {
	r := newRig(t)
	js := r.judges(6, "")
	var hashes []string
	n := 0
	login := func(j ID) {
		n++
		h := fmt.Sprintf("%064x", n)
		hashes = append(hashes, h)
		r.must(JudgeActor(j), &JudgeLogin{Judge: j, TokenHash: h})
	}
	check := func(step string) {
		t.Helper()
		for _, h := range append(hashes, "", "nope", fmt.Sprintf("%064x", 999)) {
			var want ID
			wantOK := false
			r.e.Read(func(s *State) {
				if j, ok := s.JudgeByToken(h); ok {
					want, wantOK = j.ID, true
				}
			})
			got, ok := r.e.JudgeIDByTokenHash([]byte(h))
			if ok != wantOK || got != want {
				t.Fatalf("%s: hash %.8s: mirror %v %v, index %v %v", step, h, got, ok, want, wantOK)
			}
		}
	}
	for _, j := range js {
		login(j)
	}
	check("logins")
	login(js[0]) // a new session replaces the old one
	login(js[0])
	check("logins again")
	r.must(JudgeActor(js[1]), &JudgeLogout{Judge: js[1]})
	check("logout")
	r.must(Admin, &DeleteJudge{Judge: js[2]})
	check("deletion")
	snap, _, err := r.e.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	r.must(Admin, &Reset{Type: ResetAll})
	check("reset")
	if err := r.e.Restore(snap); err != nil {
		t.Fatal(err)
	}
	check("restore")
	if _, ok := r.e.JudgeIDByTokenHash([]byte(hashes[len(hashes)-1])); !ok {
		t.Fatal("the restored state's session is not found")
	}
	// A copy of the state (snapshot capture) never writes the live mirror.
	c := r.e.s.clone()
	if c.tokens != nil {
		t.Fatal("a copy of the state shares the token mirror")
	}
}

// TestTokenMirrorConcurrent: lookups while the writer logs judges in and out (run
// under -race by make test).
func TestTokenMirrorConcurrent(t *testing.T) {
	r := newRig(t)
	js := r.judges(4, "")
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := 0; ; k++ {
				select {
				case <-stop:
					return
				default:
				}
				r.e.JudgeIDByTokenHash([]byte(fmt.Sprintf("%064x", k%50)))
			}
		}()
	}
	for i := 0; i < 400; i++ {
		j := js[i%len(js)]
		if i%7 == 0 {
			r.must(JudgeActor(j), &JudgeLogout{Judge: j})
			continue
		}
		r.must(JudgeActor(j), &JudgeLogin{Judge: j, TokenHash: fmt.Sprintf("%064x", i%50)})
	}
	close(stop)
	wg.Wait()
}

// TestTryReadAndSkippedPeek: TryRead does not wait while the writer holds the state,
// and a judge's next submitted without the peek (what the handler does then) answers
// what the peek would have: the current project, or why there is none.
func TestTryReadAndSkippedPeek(t *testing.T) {
	r := newRig(t)
	r.projects(5)
	js := r.judges(2, "")
	r.e.mu.Lock()
	if r.e.TryRead(func(*State) { t.Error("ran while the writer held the state") }) {
		t.Fatal("TryRead reported a read while the writer held the state")
	}
	r.e.mu.Unlock()
	peek := func(j ID) (res NextResult, final bool) {
		if !r.e.TryRead(func(s *State) { res, final = s.PeekNext(j) }) {
			t.Fatal("TryRead did not run on a free state")
		}
		return
	}
	if res, final := peek(js[0]); !final || res.Reason != ReasonPaused {
		t.Fatalf("peek while paused: %+v %v", res, final)
	}
	if got := r.next(js[0]); got.Reason != ReasonPaused || !got.ProjectID.IsZero() {
		t.Fatalf("next while paused: %+v", got)
	}
	r.must(Admin, &ClockUnpause{})
	first := r.next(js[1])
	// With a current project the command answers (it lists the upcoming ones too).
	if _, final := peek(js[1]); final {
		t.Fatal("peek with a current project is final")
	}
	if again := r.next(js[1]); again.ProjectID != first.ProjectID || len(again.Upcoming) == 0 {
		t.Fatalf("next again %+v, first %+v", again, first)
	}
}
