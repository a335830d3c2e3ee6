package engine

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

// refusal applies cmd and returns the refusal's message (it must be a 409).
func (r *rig) refusal(actor Actor, cmd Command) string {
	r.t.Helper()
	_, err := r.apply(actor, cmd)
	var ee *Error
	if !errors.As(err, &ee) || ee.Kind != KindConflict {
		r.t.Fatalf("%s: err %v, want a conflict", cmd.Kind(), err)
	}
	return ee.Error()
}

// TestOnlyOfferedProjectsByName: a finish or an at naming a project is accepted only
// for the current project or one of the latest next's upcoming ones
// (docs/behaviour.md#offered-projects-only), the audit log says "visited offline", and
// the offered list survives a quiet replay of the journal's records and a snapshot
// (read by the hand decoder).
func TestOnlyOfferedProjectsByName(t *testing.T) {
	r := newRig(t)
	ps := r.projects(8)
	js := r.judges(2, "")
	j, k := js[0], js[1]
	r.must(Admin, &ClockUnpause{})

	// A judge that never asked for a project cannot finish or stand at one.
	if msg := r.refusal(JudgeActor(k), &JudgeFinish{Judge: k, Project: ps[7]}); !strings.Contains(msg, "did not send you") {
		t.Fatalf("never offered: %q", msg)
	}
	r.fails(KindConflict, JudgeActor(k), &JudgeAt{Judge: k, Project: ps[7]})

	first := r.next(j)
	if got := r.judge(j).Upcoming; !slices.Equal(got, first.Upcoming) || len(got) != 2 {
		t.Fatalf("judge keeps upcoming %v, next answered %v", got, first.Upcoming)
	}
	var other ID // a project neither current nor upcoming
	for _, p := range ps {
		if p != first.ProjectID && !containsID(first.Upcoming, p) {
			other = p
			break
		}
	}
	r.must(JudgeActor(j), &JudgeFinish{Judge: j, Project: first.ProjectID})
	if msg := r.refusal(JudgeActor(j), &JudgeFinish{Judge: j, Project: other}); !strings.Contains(msg, "did not send you") {
		t.Fatalf("not offered: %q", msg)
	}
	if msg := r.refusal(JudgeActor(j), &JudgeAt{Judge: j, Project: other}); !strings.Contains(msg, "did not send you") {
		t.Fatalf("at, not offered: %q", msg)
	}
	// Offered: the first upcoming one is finished by name, the second becomes current
	// through at (the dashboard's Current), and at again changes nothing.
	up := first.Upcoming
	r.must(JudgeActor(j), &JudgeFinish{Judge: j, Project: up[0], Notes: "offline"})
	r.must(JudgeActor(j), &JudgeAt{Judge: j, Project: up[1]})
	if cur := r.judge(j).Current; cur != up[1] {
		t.Fatalf("current %v after at, want %v", cur, up[1])
	}
	r.must(JudgeActor(j), &JudgeAt{Judge: j, Project: up[1]})
	if msg := r.refusal(JudgeActor(j), &JudgeAt{Judge: j, Project: up[0]}); !strings.Contains(msg, "meanwhile") {
		t.Fatalf("at with another current: %q", msg)
	}
	visited := 0
	for _, l := range r.e.s.Log {
		if strings.Contains(l, "visited offline project") {
			visited++
		}
		if strings.Contains(l, "assigned project "+r.project(up[0]).Name+" ") || strings.Contains(l, "assigned project "+r.project(up[1]).Name+" ") {
			t.Fatalf("an offline visit logged as assigned: %s", l)
		}
	}
	if visited != 2 {
		t.Fatalf("%d visited-offline lines, want 2:\n%s", visited, strings.Join(r.e.s.Log, "\n"))
	}

	// A second next replaces the list; the state replays from the journal's records
	// (quietly, as recovery does) and restores from a snapshot with the list.
	r.must(JudgeActor(j), &JudgeFinish{Judge: j})
	second := r.next(j)
	if !slices.Equal(r.judge(j).Upcoming, second.Upcoming) {
		t.Fatalf("upcoming %v, want the latest %v", r.judge(j).Upcoming, second.Upcoming)
	}
	fresh := New()
	for _, env := range r.envs {
		b, err := env.AppendJSON(nil)
		if err != nil {
			t.Fatal(err)
		}
		var dec Envelope
		if err := DecodeEnvelope(b, &dec); err != nil {
			t.Fatal(err)
		}
		if err := fresh.Replay(&dec); err != nil {
			t.Fatalf("replay %s: %v", dec.Cmd.Kind(), err)
		}
	}
	if snapshotOf(t, fresh) != snapshotOf(t, r.e) {
		t.Fatal("quiet replay differs from the live state")
	}
	snap, _, err := r.e.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	var s State
	if !decodeStateFast(snap, &s) {
		t.Fatal("a snapshot with offered projects falls back to encoding/json")
	}
	if !slices.Equal(s.Judges[j].Upcoming, second.Upcoming) {
		t.Fatalf("restored upcoming %v, want %v", s.Judges[j].Upcoming, second.Upcoming)
	}
}
