package engine

import (
	"fmt"
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

// TestLogProjectMatchesLogf: the judging flow's hand-built lines are the ones logf
// writes from their format, line breaks in names included, for every actor, and the
// reused buffer carries nothing from one line into the next.
func TestLogProjectMatchesLogf(t *testing.T) {
	s := NewState()
	jid := ID{1}
	s.Judges[jid] = &Judge{ID: jid, Name: "Ada\nLovelace"}
	names := append(append([]string(nil), awkwardTexts...), "", "Project 7", strings.Repeat("long name ", 600))
	for i, name := range names {
		p := &Project{Name: name, Location: []int{0, 1, -3, 1 << 40, 42}[i%5]}
		for _, actor := range []Actor{Admin, JudgeActor(jid), JudgeActor(ID{9}), {Kind: ActorPublic}} {
			for _, tail := range [][]string{nil, {": ", "busy"}} {
				a := &Ctx{Time: int64(1_700_000_000_000 + i), Actor: actor, state: s}
				a.logProject("skipped", p, tail...)
				b := &Ctx{Time: a.Time, Actor: actor, state: s}
				b.logf("skipped project %s (table %d)%s", p.Name, p.Location, strings.Join(tail, ""))
				got, want := s.Log[len(s.Log)-2], s.Log[len(s.Log)-1]
				if got != want {
					t.Fatalf("%s by %v: %q, want %q", fmt.Sprintf("%.40q", name), actor, got, want)
				}
				if ev := a.events[0].Data.(LogEvent); len(ev.Lines) != 1 || ev.Lines[0] != got {
					t.Fatalf("event %v, want the line %q", ev, got)
				}
			}
		}
	}
}
