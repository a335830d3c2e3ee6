package persist

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"podium/engine"
)

// TestPipelinedCommitUnderFault drives the pipelined commit with many concurrent
// writers and makes the journal fail in the middle. Every change acknowledged must
// survive a restart; every change refused (503) must be invisible to a read made right
// after the refusal and absent after the restart; and nothing is answered twice or
// never.
func TestPipelinedCommitUnderFault(t *testing.T) {
	dir := t.TempDir()
	n := openNode(t, dir, Options{SnapshotEvery: 300})
	const writers = 24
	var (
		mu        sync.Mutex
		acked     = map[string]bool{}
		refused   = map[string]bool{}
		sawRefuse atomic.Int64
		visible   atomic.Int64
		writes    atomic.Int64
	)
	names := func(s *engine.State) map[string]bool {
		m := make(map[string]bool, len(s.Projects))
		for _, p := range s.Projects {
			m[p.Name] = true
		}
		return m
	}
	var wg sync.WaitGroup
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				name := fmt.Sprintf("w%d-%d", w, i)
				_, err := n.Submit(context.Background(), engine.Admin, &engine.CreateProjects{Projects: []engine.NewProject{{Name: name}}})
				if writes.Add(1) == 400 {
					n.j.SetFault(func() error { return errors.New("input/output error") })
				}
				switch {
				case err == nil:
					mu.Lock()
					acked[name] = true
					mu.Unlock()
				case errors.Is(err, ErrReadOnly):
					var seen bool
					n.Read(func(s *engine.State) { seen = names(s)[name] })
					if seen {
						visible.Add(1)
					}
					mu.Lock()
					refused[name] = true
					mu.Unlock()
					if sawRefuse.Add(1) > 50 {
						return
					}
				default:
					t.Errorf("submit %s: %v", name, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	if visible.Load() > 0 {
		t.Errorf("%d refused changes were visible to a read right after the refusal", visible.Load())
	}
	if len(acked) < 300 || len(refused) == 0 {
		t.Fatalf("acked %d, refused %d: the fault did not split the run", len(acked), len(refused))
	}
	n.Read(func(s *engine.State) {
		got := names(s)
		for name := range refused {
			if got[name] {
				t.Errorf("refused %s is in the state after the rollback", name)
			}
		}
	})
	n.j.SetFault(nil)
	crash(n)
	n = openNode(t, dir, Options{})
	defer n.Close()
	n.Read(func(s *engine.State) {
		got := names(s)
		for name := range acked {
			if !got[name] {
				t.Errorf("acknowledged %s lost after restart", name)
			}
		}
		for name := range refused {
			if got[name] {
				t.Errorf("refused %s came back after restart", name)
			}
		}
		if len(got) != len(acked) {
			t.Errorf("after restart %d projects, want the %d acknowledged", len(got), len(acked))
		}
	})
}
