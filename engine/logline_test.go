package engine

import (
	"strings"
	"testing"
	"time"
)

// The audit line's hand-written time and line-break check against the library's.
func TestAppendLogTimeMatchesFormat(t *testing.T) {
	r := NewRand(11)
	cases := []int64{0, 1, 999, 1_700_000_000_000, 253402300799999, 253402300800000, -1, -62135596800000, -62135596800001}
	for i := 0; i < 20000; i++ {
		cases = append(cases, int64(r.Uint64()%400_000_000_000_000)-100_000_000_000_000)
	}
	for _, ms := range cases {
		want := time.UnixMilli(ms).UTC().Format(logTimeLayout)
		if got := string(appendLogTime(nil, ms)); got != want {
			t.Fatalf("%d: %q, want %q", ms, got, want)
		}
	}
}

func TestHasLineBreak(t *testing.T) {
	for _, s := range []string{"", "plain", "a\rb", "a\nb", "x\u2028", "\u2029y", "é€☃", "\xe2\x80", "\xe2\x80\xa7", "tab\there"} {
		want := strings.ContainsAny(s, "\r\n\u2028\u2029")
		if got := hasLineBreak([]byte(s)); got != want {
			t.Errorf("%q: %v, want %v", s, got, want)
		}
	}
}
