package engine

import (
	"math"
	"testing"
)

// TestTableNumbersCannotOverflow: a table number or group size near the int limit is
// bad input (400), not a state in which the next project's table max+1 wraps negative
// or group ranges overflow.
func TestTableNumbersCannotOverflow(t *testing.T) {
	f := newFixture(t)
	res, _, err := f.applyRes(&CreateProjects{Projects: []NewProject{{Name: "A"}}})
	if err != nil {
		t.Fatal(err)
	}
	id := res.(CreatedProjects).IDs[0]
	f.fail(&MoveProject{Project: id, Location: math.MaxInt}, KindInvalid)
	f.fail(&MoveProject{Project: id, Location: MaxLocation + 1}, KindInvalid)
	f.must(&MoveProject{Project: id, Location: MaxLocation})
	f.must(&CreateProjects{Projects: []NewProject{{Name: "B"}}})
	for _, p := range f.s().Projects {
		if p.Location < 1 {
			t.Fatalf("project %s at table %d", p.Name, p.Location)
		}
	}
	big := []int{math.MaxInt, math.MaxInt, 1}
	f.fail(&SetOptions{GroupSizes: &big}, KindInvalid)
	over := []int{MaxLocation + 1, 1, 1}
	f.fail(&SetOptions{GroupSizes: &over}, KindInvalid)
	ok := []int{MaxLocation, 1, 1}
	f.must(&SetOptions{GroupSizes: &ok})
}
