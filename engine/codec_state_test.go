package engine

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"reflect"
	"runtime"
	"testing"
)

// codecTestState is a state with random judges (awkward texts, nil and empty lists),
// projects, flags, log lines and options, encoded as a snapshot.
func codecTestState(t *testing.T, r *rand.Rand, judges int) []byte {
	t.Helper()
	e := New()
	ps := make([]NewProject, 20)
	for i := range ps {
		ps[i] = NewProject{Name: fmt.Sprint("p", i), ChallengeList: []string{"AI"}}
	}
	if _, _, err := e.Apply(&Envelope{Time: 1000, Seed: 1, Actor: Admin, Cmd: &CreateProjects{Projects: ps}}); err != nil {
		t.Fatal(err)
	}
	e.mu.Lock()
	for i := 0; i < judges; i++ {
		j := randJudge(r)
		e.s.Judges[j.ID] = j
		e.s.JudgeOrder = append(e.s.JudgeOrder, j.ID)
	}
	for _, p := range e.s.Projects {
		p.Ratings = ProjectRating{Rating: r.NormFloat64(), SD: r.Float64(), PTop: r.Float64() / 1e6, PTop3: 1e21 * r.Float64(), Rank: r.IntN(30)}
		p.Prioritized, p.Seen, p.LastActivity = r.IntN(2) == 0, r.IntN(9), r.Int64()
		p.Description = awkwardTexts[r.IntN(len(awkwardTexts))]
		switch r.IntN(3) {
		case 1:
			p.TrackSeen = map[string]int{}
		case 2:
			p.TrackSeen = map[string]int{awkwardTexts[r.IntN(len(awkwardTexts))]: r.IntN(5) - 1, "AI": 3}
		}
		if r.IntN(4) == 0 {
			p.ChallengeList = nil
		}
	}
	e.s.Log = append(e.s.Log, awkwardTexts...)
	e.s.TrackFits = []TrackFit{{Track: "AI", Projects: []ID{randID(r)}, Rating: []float64{r.NormFloat64()}, SD: []float64{r.Float64()}, Beta: 0.5, Tau: 0.7}}
	e.s.Undo = map[ID]UndoPoint{}
	for _, id := range e.s.JudgeOrder[:judges/2] {
		e.s.Undo[id] = UndoPoint{Project: randID(r), Time: r.Int64(), General: r.IntN(2) == 0,
			Track: awkwardTexts[r.IntN(len(awkwardTexts))], Group: r.IntN(3), GroupSeen: r.IntN(5)}
	}
	e.mu.Unlock()
	var b bytes.Buffer
	if _, err := e.EncodeTo(&b); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// decodeStateBoth decodes a snapshot by hand and with encoding/json and fails unless
// both fail or both give the same state.
func decodeStateBoth(t *testing.T, b []byte) bool {
	t.Helper()
	var fast, slow State
	errFast := decodeState(b, &fast)
	errSlow := json.Unmarshal(b, &slow)
	for _, j := range slow.Judges { // the hand decoder builds the seen filters as it reads
		if j != nil {
			j.buildSeenFilter()
		}
	}
	if (errFast == nil) != (errSlow == nil) {
		t.Fatalf("%.300s\ndecodeState: %v\njson.Unmarshal: %v", b, errFast, errSlow)
	}
	if errFast == nil && !reflect.DeepEqual(fast, slow) {
		t.Fatalf("%.300s\nthe two decodings differ", b)
	}
	return errFast == nil
}

// A snapshot decodes by hand to what encoding/json gives, judges included; the fast
// path is the one taken for Podium's own snapshots.
func TestDecodeStateMatchesUnmarshal(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	b := codecTestState(t, r, 300)
	if !decodeStateBoth(t, b) {
		t.Fatal("snapshot does not decode")
	}
	var s State
	if !decodeStateFast(b, &s) {
		t.Fatal("a snapshot Podium wrote took the slow path")
	}
	if len(s.Judges) != 300 || len(s.Projects) != 20 || len(s.Log) < len(awkwardTexts) {
		t.Fatalf("decoded %d judges, %d projects, %d log lines", len(s.Judges), len(s.Projects), len(s.Log))
	}
}

// Damaged snapshots and JSON Podium never writes (other key cases, duplicate keys,
// unknown fields, escapes in keys) decode as encoding/json decodes them, or fail as it
// does.
func TestDecodeStateMutations(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	special := []byte(`{}[]",:\ 0123456789.eE+-tfnul`)
	b := codecTestState(t, r, 8)
	for k := 0; k < 1000; k++ {
		m := append([]byte(nil), b...)
		p := r.IntN(len(m))
		switch r.IntN(3) {
		case 0:
			m[p] = special[r.IntN(len(special))]
		case 1:
			m = append(m[:p], m[p+1:]...)
		case 2:
			m = append(m[:p], append([]byte{special[r.IntN(len(special))]}, m[p:]...)...)
		}
		decodeStateBoth(t, m)
	}
	for _, edit := range [][2]string{
		{`"judges":{`, `"Judges":{`},
		{`"seen_projects":`, `"extra":1,"seen_projects":`},
		{`"applied":`, `"unknown_field":[1,2],"applied":`},
		{`"log":[`, `"log":["a\u00e9",`},
		{`"undo":{`, `"undo":{"Project":1,`},
		{`"group_seen":`, `"Group_Seen":`},
		{`"judge_order":[`, `"judge_order":["ABCDEF000000000000000000",`},
	} {
		m := bytes.Replace(b, []byte(edit[0]), []byte(edit[1]), 1)
		if bytes.Equal(m, b) {
			t.Fatalf("edit %q matched nothing", edit[0])
		}
		decodeStateBoth(t, m)
	}
}

// A big snapshot's judges are read in parts on several goroutines (cut between two
// judges): the state is the one encoding/json gives, and damage next to
// a cut decodes as encoding/json decodes it, or fails as it does.
func TestDecodeStateInParts(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	r := rand.New(rand.NewPCG(15, 16))
	b := codecTestState(t, r, 2500)
	from := bytes.Index(b, []byte(`"judges":{`)) + len(`"judges":`)
	cuts := judgesLayout.cuts(b, from, 4)
	if len(cuts) != 3 {
		t.Fatalf("%d bytes of judges: cut in %d places, want 3", bytes.Index(b, []byte(`"judge_order"`))-from, len(cuts))
	}
	var js map[ID]*Judge
	if r := (&jsonReader{b: b, i: from}); !readInParts(r, &js, cuts, (*jsonReader).judge) || len(js) != 2500 || string(b[r.i:r.i+15]) != `,"judge_order":` {
		t.Fatalf("reading in parts failed or read %d judges", len(js))
	}
	var s State
	if !decodeStateFast(b, &s) || !reflect.DeepEqual(s.Judges, js) {
		t.Fatal("the fast path failed or read other judges")
	}
	decodeStateBoth(t, b)
	for k := 0; k < 6; k++ {
		m := append([]byte(nil), b...)
		p := cuts[k%len(cuts)] + r.IntN(80) - 40
		m[p] = `{}",:`[r.IntN(5)]
		decodeStateBoth(t, m)
	}
	// The same judge on both sides of a cut: encoding/json keeps the last one.
	next := cuts[0] + 2 // the id after the first cut
	prev := bytes.LastIndex(b[:cuts[0]], []byte(`{"id":"`)) + len(`{"id":"`)
	m := append([]byte(nil), b...)
	copy(m[next:next+24], b[prev:prev+24])
	copy(m[next+24+len(`":{"id":"`):], b[prev:prev+24])
	decodeStateBoth(t, m)
}

// A big snapshot's projects are read in parts too, to what encoding/json gives.
func TestDecodeProjectsInParts(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	e := New()
	ps := make([]NewProject, 4000)
	for i := range ps {
		ps[i] = NewProject{Name: fmt.Sprint("p", i), Description: awkwardTexts[i%len(awkwardTexts)], ChallengeList: []string{"AI"}}
	}
	if _, _, err := e.Apply(&Envelope{Time: 1000, Seed: 1, Actor: Admin, Cmd: &CreateProjects{Projects: ps}}); err != nil {
		t.Fatal(err)
	}
	b, _, err := e.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	from := bytes.Index(b, []byte(`"projects":{`)) + len(`"projects":`)
	cuts := projectsLayout.cuts(b, from, 4)
	var got map[ID]*Project
	if r := (&jsonReader{b: b, i: from}); len(cuts) != 3 || !readInParts(r, &got, cuts, (*jsonReader).project) || len(got) != 4000 {
		t.Fatalf("%d cuts, read %d projects", len(cuts), len(got))
	}
	var s State
	if !decodeStateFast(b, &s) || !reflect.DeepEqual(s.Projects, got) {
		t.Fatal("the fast path failed or read other projects")
	}
	decodeStateBoth(t, b)
}
