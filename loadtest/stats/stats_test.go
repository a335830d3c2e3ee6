package stats

import (
	"testing"
	"time"
)

func TestPercentilesNearestRank(t *testing.T) {
	var d []time.Duration
	for i := 100; i >= 1; i-- {
		d = append(d, time.Duration(i)*time.Millisecond)
	}
	l := Summarize(d)
	if l.Count != 100 || l.P50 != 50 || l.P95 != 95 || l.P99 != 99 || l.Max != 100 {
		t.Fatalf("summarize = %+v", l)
	}
	if one := Summarize([]time.Duration{3 * time.Millisecond}); one.P50 != 3 || one.P99 != 3 {
		t.Fatalf("single sample = %+v", one)
	}
	if empty := Summarize(nil); empty.Count != 0 {
		t.Fatalf("empty = %+v", empty)
	}
}
