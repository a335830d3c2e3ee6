package engine

import "testing"

// TestPairRowModes drives one pairRow through random additions and removals across its
// three forms (short list, indexed list, dense) and compares every count with a map.
func TestPairRowModes(t *testing.T) {
	rnd := NewRand(11)
	for round := 0; round < 50; round++ {
		numbers := 600 + rnd.Intn(400)
		var r pairRow
		want := map[int32]int32{}
		sawIndex, sawDense, sawBack := false, false, false
		for step := 0; step < 16000; step++ {
			// Grow towards dense in the first part, then take counts away from pairs
			// that exist until the row is empty again.
			b := int32(rnd.Intn(numbers))
			d := int32(1)
			if step <= 6000 && rnd.Intn(4) == 0 {
				d = -1
			}
			if step > 6000 && len(want) > 0 && rnd.Intn(10) != 0 {
				for o := range want {
					b = o
					break
				}
				d = -1
			}
			if rnd.Intn(50) == 0 {
				numbers++ // a project was added: more numbers than a dense row holds
			}
			r.add(b, d, numbers)
			if n := want[b] + d; n > 0 {
				want[b] = n
			} else {
				delete(want, b)
			}
			sawIndex = sawIndex || r.index != nil
			sawBack = sawBack || sawDense && r.dense == nil
			sawDense = sawDense || r.dense != nil
			if r.size() != len(want) {
				t.Fatalf("round %d step %d: size %d, want %d", round, step, r.size(), len(want))
			}
			if got := r.get(b); got != want[b] {
				t.Fatalf("round %d step %d: get(%d) = %d, want %d", round, step, b, got, want[b])
			}
		}
		got := map[int32]int32{}
		r.each(func(o, n int32) { got[o] = n })
		if len(got) != len(want) {
			t.Fatalf("round %d: each gave %d pairs, want %d", round, len(got), len(want))
		}
		for o, n := range want {
			if got[o] != n || r.get(o) != n {
				t.Fatalf("round %d: pair %d = %d/%d, want %d", round, o, got[o], r.get(o), n)
			}
		}
		if !sawIndex || !sawDense || !sawBack {
			t.Fatalf("round %d: forms used: index %v dense %v back to a list %v; the test must reach all", round, sawIndex, sawDense, sawBack)
		}
	}
}

// TestPairSumsDenseMatchesBruteForce: in an event where judges saw most projects (dense
// rows), the pair sums equal the definition: for each project k, the sum over the
// judge's seen projects s of how many judges saw both s and k.
func TestPairSumsDenseMatchesBruteForce(t *testing.T) {
	for _, tc := range []struct{ projects, judges, seen int }{{100, 40, 60}, {100, 40, 5}, {300, 30, 40}} {
		s, js := benchState(t, tc.projects, tc.judges, tc.seen)
		x := s.jd()
		x.sync(s)
		x.reconcilePairs(s)
		dense := 0
		for i := range x.nbrs {
			if x.nbrs[i].dense != nil {
				dense++
			}
		}
		if tc.seen >= 40 && dense == 0 {
			t.Fatalf("%+v: no dense row; the test must cover them", tc)
		}
		saw := map[ID]map[ID]bool{}
		for _, j := range js {
			saw[j.ID] = map[ID]bool{}
			for _, sp := range j.SeenProjects {
				saw[j.ID][sp.ProjectID] = true
			}
		}
		for _, j := range js[:10] {
			sp := x.pairSums(s, j)
			for k, p := range x.proj {
				want := int32(0)
				for _, seen := range j.SeenProjects {
					if seen.ProjectID == p.ID {
						continue
					}
					for _, other := range js {
						if saw[other.ID][seen.ProjectID] && saw[other.ID][p.ID] {
							want++
						}
					}
				}
				got := int32(0)
				if x.sumMark[k] == sp {
					got = x.sum[k]
				}
				if got != want {
					t.Fatalf("%+v: judge %s project %d: sum %d, want %d", tc, j.Name, p.Location, got, want)
				}
			}
		}
	}
}
