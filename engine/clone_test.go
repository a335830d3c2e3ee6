package engine

import (
	"bytes"
	"fmt"
	"reflect"
	"testing"
)

// TestCloneSharesNothingMutable walks the copy and the original together and fails when
// any exported map, non-empty slice or pointer of the copy is the same memory as the
// original's.
func TestCloneSharesNothingMutable(t *testing.T) {
	e := bigStateSmall(t)
	e.Read(func(s *State) {
		c := s.clone()
		checkNoAlias(t, "State", reflect.ValueOf(s).Elem(), reflect.ValueOf(c).Elem())
	})
}

// bigStateSmall builds a state in which every collection is non-empty.
func bigStateSmall(t *testing.T) *Engine {
	e := New()
	apply := func(cmd Command) {
		if _, _, err := e.Apply(&Envelope{Time: 1e12, Seed: 3, Actor: Admin, Cmd: cmd}); err != nil {
			t.Fatal(err)
		}
	}
	apply(&CreateProjects{Projects: []NewProject{{Name: "a", ChallengeList: []string{"AI"}}, {Name: "b"}}})
	apply(&CreateJudges{Judges: []NewJudge{{Name: "j", Email: "j@x.io"}}, Codes: []string{"12345678"}})
	apply(&AdminLogin{SessionHash: fmt.Sprintf("%064d", 1)})
	e.Read(func(s *State) {
		for _, j := range s.Judges {
			for _, p := range s.Projects {
				j.SeenProjects = append(j.SeenProjects, SeenProject{ProjectID: p.ID})
				j.Rankings = append(j.Rankings, p.ID)
				j.Skipped[p.ID] = true
				p.TrackSeen["AI"] = 1
			}
		}
		s.Flags = append(s.Flags, Flag{Reason: "busy"})
		s.Options.Tracks = []string{"AI"}
		s.Options.TrackViews = []int{3}
		s.Options.TrackQRCodes["AI"] = "x"
		s.Options.IgnoreTracks = []string{"Z"}
		s.Content.Schedule = append(s.Content.Schedule, ScheduleEntry{})
		s.Content.Sponsors = append(s.Content.Sponsors, Sponsor{})
		s.Content.FAQ = append(s.Content.FAQ, FAQEntry{})
	})
	return e
}

func checkNoAlias(t *testing.T, path string, a, b reflect.Value) {
	t.Helper()
	switch a.Kind() {
	case reflect.Pointer:
		if a.IsNil() {
			return
		}
		if a.Pointer() == b.Pointer() {
			t.Errorf("%s: copy shares a pointer with the original", path)
			return
		}
		checkNoAlias(t, path, a.Elem(), b.Elem())
	case reflect.Map:
		if a.Len() > 0 && a.Pointer() == b.Pointer() {
			t.Errorf("%s: copy shares a map with the original", path)
			return
		}
		iter := a.MapRange()
		for iter.Next() {
			bv := b.MapIndex(iter.Key())
			if !bv.IsValid() {
				t.Errorf("%s[%v]: missing in the copy", path, iter.Key())
				continue
			}
			checkNoAlias(t, fmt.Sprintf("%s[%v]", path, iter.Key()), iter.Value(), bv)
		}
	case reflect.Slice:
		if a.Len() > 0 && a.Pointer() == b.Pointer() {
			t.Errorf("%s: copy shares a slice with the original", path)
			return
		}
		for i := 0; i < a.Len(); i++ {
			checkNoAlias(t, fmt.Sprintf("%s[%d]", path, i), a.Index(i), b.Index(i))
		}
	case reflect.Struct:
		for i := 0; i < a.NumField(); i++ {
			if !a.Type().Field(i).IsExported() {
				continue
			}
			checkNoAlias(t, path+"."+a.Type().Field(i).Name, a.Field(i), b.Field(i))
		}
	}
}

func TestCaptureEncodesLikeSnapshot(t *testing.T) {
	e := bigStateSmall(t)
	want, seq, _ := e.Snapshot()
	enc, seq2 := e.Capture()
	// Changes after the capture do not reach it.
	e.Apply(&Envelope{Time: 2e12, Seed: 9, Actor: Admin, Cmd: &CreateProjects{Projects: []NewProject{{Name: "later"}}}})
	got, err := enc()
	if err != nil || seq != seq2 || !bytes.Equal(got, want) {
		t.Fatalf("capture differs from snapshot (seq %d vs %d, err %v)", seq2, seq, err)
	}
}

// BenchmarkCapture measures what the writer pays for a snapshot at the scale target.
//
//	go test ./engine -run '^$' -bench Capture -benchtime 5x
func BenchmarkCapture(b *testing.B) {
	e := bigState(b)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		e.Capture()
	}
}
