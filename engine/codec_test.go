package engine

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
)

// codecEnvelopes returns random envelopes of every kind with a hand decoder, plus a
// few without one.
func codecEnvelopes(r *rand.Rand, n int) []*Envelope {
	texts := awkwardTexts
	id := func() ID { return randID(r) }
	ids := func() []ID {
		k := r.IntN(5) - 1
		if k < 0 {
			return nil
		}
		out := make([]ID, k)
		for i := range out {
			out[i] = id()
		}
		return out
	}
	floats := func(k int) []float64 {
		out := make([]float64, k)
		for i := range out {
			out[i] = r.NormFloat64() * []float64{1, 1e-9, 1e12}[r.IntN(3)]
			if r.IntN(2) == 0 { // rounded to 6 decimals, as the fitter writes them
				out[i] = math.Round(out[i]*1e6) / 1e6
			}
		}
		return out
	}
	actors := []Actor{Admin, System, Public, JudgeActor(id())}
	var out []*Envelope
	for i := 0; i < n; i++ {
		var cmd Command
		switch i % 9 {
		case 0:
			next := &JudgeNext{Judge: id()}
			if r.IntN(2) == 0 {
				got := id()
				next.Got = &got
			}
			if r.IntN(2) == 0 { // the offered list (docs/behaviour.md#offered-projects-only)
				next.Upcoming = ids()
			}
			cmd = next
		case 1:
			finish := &JudgeFinish{Judge: id(), Notes: texts[r.IntN(len(texts))], Starred: r.IntN(2) == 0, Feedback: texts[r.IntN(len(texts))]}
			if r.IntN(2) == 0 {
				finish.Project = id()
			}
			cmd = finish
		case 2:
			cmd = &JudgeSkip{Judge: id(), Reason: texts[r.IntN(len(texts))]}
		case 3:
			cmd = &JudgeRank{Judge: id(), Ranking: ids()}
		case 4:
			cmd = &JudgeStar{Judge: id(), Project: id(), Starred: r.IntN(2) == 0}
		case 5:
			cmd = &JudgeNotes{Judge: id(), Project: id(), Notes: texts[r.IntN(len(texts))]}
		case 6:
			ps, js := ids(), ids()
			cmd = &SetRatings{Version: r.Uint64(), Projects: ps, Rating: floats(len(ps)), SD: floats(len(ps)),
				PTop: floats(len(ps)), PTop3: floats(len(ps)), Judges: js, Reliability: floats(len(js))}
			if r.IntN(2) == 0 {
				sr := cmd.(*SetRatings)
				sr.Disagreement = floats(len(js))
				sr.Compared = make([]int, len(js))
				for i := range sr.Compared {
					sr.Compared[i] = r.IntN(1000)
				}
			}
			if r.IntN(2) == 0 { // track prize orders (docs/behaviour.md#track-prizes)
				sr := cmd.(*SetRatings)
				for k := r.IntN(3); k >= 0; k-- {
					tp := ids()
					sr.Tracks = append(sr.Tracks, TrackFit{Track: texts[r.IntN(len(texts))], Projects: tp, Rating: floats(len(tp)),
						SD: floats(len(tp)), Beta: r.Float64(), Center: r.NormFloat64(), Tau: r.Float64()})
				}
			}
		case 7:
			cmd = &ClockPause{}
		case 8:
			cmd = &CreateJudges{Judges: []NewJudge{{Name: texts[r.IntN(len(texts))], Email: "a@b.c"}}, Codes: []string{"12345678"}}
		}
		env := &Envelope{Time: r.Int64() - r.Int64(), Seed: r.Uint64(), Actor: actors[r.IntN(len(actors))], Cmd: cmd}
		if r.IntN(3) == 0 { // a keyed judge write with its kept answer (idempotency.go)
			env.Keyed = &Keyed{Key: texts[r.IntN(len(texts))], Request: "POST /api/judge/finish " + texts[r.IntN(len(texts))],
				Status: 200, Body: `{"ok":1,"note":` + fmt.Sprintf("%q", texts[r.IntN(len(texts))]) + `}`}
		}
		out = append(out, env)
	}
	return out
}

// decodeBoth decodes b with DecodeEnvelope and with encoding/json and fails unless
// both fail or both give the same envelope.
func decodeBoth(t *testing.T, b []byte) (Envelope, bool) {
	t.Helper()
	var fast, slow Envelope
	errFast := DecodeEnvelope(b, &fast)
	errSlow := json.Unmarshal(b, &slow)
	if (errFast == nil) != (errSlow == nil) {
		t.Fatalf("%s\nDecodeEnvelope: %v\njson.Unmarshal: %v", b, errFast, errSlow)
	}
	if errFast == nil && !reflect.DeepEqual(fast, slow) {
		t.Fatalf("%s\nDecodeEnvelope: %+v\njson.Unmarshal: %+v", b, fast, slow)
	}
	return fast, errFast == nil
}

// DecodeEnvelope gives what encoding/json gives for every record the journal writes.
func TestDecodeEnvelopeMatchesUnmarshal(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for i, env := range codecEnvelopes(r, 3000) {
		b, err := env.AppendJSON(nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := decodeBoth(t, b); !ok {
			t.Fatalf("record %d does not decode: %s", i, b)
		}
	}
}

// Damaged or unusual records decode as encoding/json decodes them, or fail as it does:
// random byte edits, cuts and insertions of the bytes JSON cares about.
func TestDecodeEnvelopeMutations(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	special := []byte(`{}[]",:\ 0123456789.eE+-tfnul`)
	for _, env := range codecEnvelopes(r, 4000) {
		b, _ := env.AppendJSON(nil)
		for k := 0; k < 3; k++ {
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
			decodeBoth(t, m)
		}
	}
}

// FuzzDecodeEnvelope: any record decodes as encoding/json decodes it, or fails as it
// does (seeded with records of every hot kind in the journal's layout).
//
//	go test ./engine -run '^$' -fuzz FuzzDecodeEnvelope -fuzztime 30s -parallel 1
func FuzzDecodeEnvelope(f *testing.F) {
	for _, env := range codecEnvelopes(rand.New(rand.NewPCG(17, 18)), 27) {
		b, _ := env.AppendJSON(nil)
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) { decodeBoth(t, b) })
}

// codecTestCmd is a command whose hand decoder knows only one of its fields, as an
// older decoder meets a field added later.
type codecTestCmd struct {
	A string `json:"a"`
	B int    `json:"b"`
}

func (*codecTestCmd) Kind() string                        { return "test.codec" }
func (*codecTestCmd) apply(s *State, c *Ctx) (any, error) { return nil, nil }
func (cmd *codecTestCmd) decodeJSON(r *jsonReader) bool {
	return r.object(func(k []byte) bool { return string(k) == "a" && r.text(&cmd.A) })
}

func init() { register(func() Command { return &codecTestCmd{} }) }

// What the hand decoder does not know goes to encoding/json: envelope fields and
// command fields added by other versions, kinds without a decoder, unknown kinds, and
// JSON the journal never writes (escapes, other key cases, nulls, whitespace).
func TestDecodeEnvelopeFallback(t *testing.T) {
	const judge = `"0102030405060708090a0b0c"`
	cases := []struct {
		name, rec string
		want      Command // nil: an error is expected
	}{
		{"known field", `{"k":"test.codec","t":1,"s":2,"a":{"k":"admin"},"d":{"a":"x"}}`, &codecTestCmd{A: "x"}},
		{"field the decoder does not know", `{"k":"test.codec","t":1,"s":2,"a":{"k":"admin"},"d":{"a":"x","b":7}}`, &codecTestCmd{A: "x", B: 7}},
		{"unknown command field", `{"k":"judging.finish","t":1,"s":2,"a":{"k":"judge","j":` + judge + `},"d":{"judge":` + judge + `,"notes":"n","starred":true,"venue":` + judge + `}}`,
			&JudgeFinish{Judge: ID{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}, Notes: "n", Starred: true}},
		{"unknown envelope field", `{"k":"judging.next","t":1,"s":2,"a":{"k":"admin"},"idem":"abc","d":{"judge":` + judge + `}}`,
			&JudgeNext{Judge: ID{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}}},
		{"unknown kind", `{"k":"judging.teleport","t":1,"s":2,"a":{"k":"admin"},"d":{}}`, nil},
		{"kind without decoder", `{"k":"clock.pause","t":1,"s":2,"a":{"k":"admin"},"d":{}}`, &ClockPause{}},
		{"escaped notes", `{"k":"judging.finish","t":1,"s":2,"a":{"k":"admin"},"d":{"judge":` + judge + `,"notes":"a\"b\u00e9\n","starred":false}}`,
			&JudgeFinish{Judge: ID{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}, Notes: "a\"bé\n"}},
		{"key in another case", `{"k":"judging.next","t":1,"s":2,"a":{"k":"admin"},"d":{"Judge":` + judge + `}}`,
			&JudgeNext{Judge: ID{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}}},
		{"null starred", `{"k":"judging.star","t":1,"s":2,"a":{"k":"admin"},"d":{"judge":` + judge + `,"starred":null}}`,
			&JudgeStar{Judge: ID{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}}},
		{"duplicate key", `{"k":"judging.finish","t":1,"s":2,"a":{"k":"admin"},"d":{"notes":"a","notes":"b"}}`, &JudgeFinish{Notes: "b"}},
		{"whitespace", " {\"k\" : \"ratings.set\",\n\"t\":1,\"s\":2,\"a\":{},\"d\":{\"projects\":[ ],\"rating\":[]} } ", &SetRatings{Projects: []ID{}, Rating: []float64{}}},
		{"data first", `{"d":{"judge":` + judge + `},"k":"judging.next","t":1}`, &JudgeNext{Judge: ID{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}}},
		{"bad id", `{"k":"judging.next","t":1,"s":2,"a":{"k":"admin"},"d":{"judge":"XYZ"}}`, nil},
		{"no data", `{"k":"judging.next","t":1,"s":2,"a":{"k":"admin"}}`, nil},
		{"trailing bytes", `{"k":"clock.pause","t":1,"s":2,"a":{"k":"admin"},"d":{}}x`, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := decodeBoth(t, []byte(tc.rec))
			if tc.want == nil {
				if ok {
					t.Fatalf("decoded %+v, want an error", got)
				}
				return
			}
			if !ok || !reflect.DeepEqual(got.Cmd, tc.want) {
				t.Fatalf("got %+v (ok %v), want %+v", got.Cmd, ok, tc.want)
			}
		})
	}
	var env Envelope
	if err := DecodeEnvelope([]byte(`{"k":"judging.teleport","d":{}}`), &env); err == nil || !strings.Contains(err.Error(), `unknown command kind "judging.teleport"`) {
		t.Fatalf("unknown kind: %v", err)
	}
}

// BenchmarkDecodeEnvelope compares the hand decoder with encoding/json on a judge's
// finish record and on a fit result of 10,000 projects.
//
//	go test ./engine -run '^$' -bench DecodeEnvelope
func BenchmarkDecodeEnvelope(b *testing.B) {
	finish, _ := (&Envelope{Time: 1764000000000, Seed: 42, Actor: JudgeActor(ID{1, 2, 3}), Cmd: &JudgeFinish{Judge: ID{1, 2, 3}, Notes: "solid demo, good ux", Starred: true}}).AppendJSON(nil)
	r := rand.New(rand.NewPCG(1, 2))
	fit := &SetRatings{}
	for i := 0; i < 10000; i++ {
		fit.Projects = append(fit.Projects, randID(r))
		for _, l := range []*[]float64{&fit.Rating, &fit.SD, &fit.PTop, &fit.PTop3} {
			*l = append(*l, math.Round(r.Float64()*1e6)/1e6) // as the fitter rounds them
		}
	}
	ratings, _ := (&Envelope{Actor: System, Cmd: fit}).AppendJSON(nil)
	for _, rec := range []struct {
		name string
		b    []byte
	}{{"finish", finish}, {"ratings", ratings}} {
		b.Run(fmt.Sprint(rec.name, "/json"), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				var env Envelope
				if err := json.Unmarshal(rec.b, &env); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(fmt.Sprint(rec.name, "/hand"), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				var env Envelope
				if err := DecodeEnvelope(rec.b, &env); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// A next's journal record carries the project it assigned (JudgeNext.Got), and the
// replay assigns it without running the assignment: the replayed state is the live
// one, in spread and focus mode, with groups (a move to another group is not recorded,
// so the replay runs that assignment), skips and a fit.
func TestReplayRecordedNextGivesIdenticalState(t *testing.T) {
	for _, mode := range []string{ModeFocus, ModeSpread} {
		t.Run(mode, func(t *testing.T) {
			live := New()
			rec := newRecorder(t, live, 1)
			apply := rec.apply
			ps := make([]NewProject, 60)
			for i := range ps {
				ps[i] = NewProject{Name: fmt.Sprint("p", i)}
			}
			apply(Admin, &CreateProjects{Projects: ps})
			yes, groups, min := true, 3, 2
			apply(Admin, &SetOptions{MultiGroup: &yes, NumGroups: &groups, AssignmentMode: &mode, MinViews: &min})
			apply(Admin, &ReassignProjects{})
			res := apply(Admin, &CreateJudges{Judges: []NewJudge{{Name: "a", Email: "a@x.org"}, {Name: "b", Email: "b@x.org"}, {Name: "c", Email: "c@x.org"}},
				Codes: []string{"11111111", "22222222", "33333333"}}).([]CreatedJudge)
			apply(Admin, &ClockUnpause{})
			r := rand.New(rand.NewPCG(7, 8))
			recorded, unrecorded := 0, 0
			for i := 0; i < 150; i++ {
				j := res[r.IntN(len(res))].ID
				next := &JudgeNext{Judge: j}
				if out, ok := apply(JudgeActor(j), next).(NextResult); ok && !out.ProjectID.IsZero() {
					if next.Got != nil {
						recorded++
					} else {
						unrecorded++
					}
				}
				switch r.IntN(5) {
				case 0:
					apply(JudgeActor(j), &JudgeSkip{Judge: j, Reason: SkipBusy})
				default:
					apply(JudgeActor(j), &JudgeFinish{Judge: j, Notes: "n", Starred: r.IntN(2) == 0})
				}
				if i == 60 {
					fit := &SetRatings{}
					live.Read(func(s *State) {
						fit.Version = s.RatingInputsVersion()
						for _, p := range s.ProjectsByLocation() {
							fit.Projects = append(fit.Projects, p.ID)
							fit.Rating = append(fit.Rating, r.NormFloat64())
							fit.SD, fit.PTop, fit.PTop3 = append(fit.SD, 0.5), append(fit.PTop, 0.01), append(fit.PTop3, 0.05)
						}
					})
					apply(System, fit)
				}
			}
			if recorded == 0 || unrecorded == 0 {
				t.Fatalf("assignments recorded %d, not recorded (group moves) %d: want both", recorded, unrecorded)
			}
			fresh := New()
			for i, record := range rec.records {
				var env Envelope
				if err := DecodeEnvelope(record, &env); err != nil {
					t.Fatalf("decode record %d: %v", i, err)
				}
				if _, _, err := fresh.Apply(&env); err != nil {
					t.Fatalf("replay record %d: %v", i, err)
				}
			}
			if snapshotHash(t, live) != snapshotHash(t, fresh) {
				t.Fatal("replayed state differs from the live state")
			}
		})
	}
}

// Replay leaves the state Apply leaves: a journal applied quietly (no events) and
// applied with its events give the same snapshot.
func TestReplayMatchesApply(t *testing.T) {
	loud, quiet := New(), New()
	r := rand.New(rand.NewPCG(13, 14))
	tm := int64(1_700_000_000_000)
	ps := make([]NewProject, 30)
	for i := range ps {
		ps[i] = NewProject{Name: fmt.Sprint("p", i)}
	}
	envs := []*Envelope{{Time: tm, Seed: 1, Actor: Admin, Cmd: &CreateProjects{Projects: ps}},
		{Time: tm, Seed: 2, Actor: Admin, Cmd: &CreateJudges{Judges: []NewJudge{{Name: "a", Email: "a@x.org"}, {Name: "b", Email: "b@x.org"}}, Codes: []string{"11111111", "22222222"}}},
		{Time: tm, Seed: 3, Actor: Admin, Cmd: &ClockUnpause{}}}
	for _, env := range envs {
		if _, _, err := loud.Apply(env); err != nil {
			t.Fatal(err)
		}
		if err := quiet.Replay(env); err != nil {
			t.Fatal(err)
		}
	}
	var judges []ID
	loud.Read(func(s *State) { judges = s.JudgeOrder })
	for i := 0; i < 200; i++ {
		j := judges[r.IntN(len(judges))]
		var cmd Command = &JudgeNext{Judge: j}
		switch r.IntN(4) {
		case 1:
			cmd = &JudgeFinish{Judge: j, Notes: "n"}
		case 2:
			cmd = &JudgeSkip{Judge: j, Reason: SkipAbsent}
		case 3:
			cmd = &JudgeSkip{Judge: j, Reason: "cannot-demo"}
		}
		env := &Envelope{Time: tm + int64(i), Seed: r.Uint64(), Actor: JudgeActor(j), Cmd: cmd}
		_, _, errLoud := loud.Apply(env)
		if next, ok := cmd.(*JudgeNext); ok {
			next.Got = nil // the quiet side runs the assignment too
		}
		if errQuiet := quiet.Replay(env); (errLoud == nil) != (errQuiet == nil) {
			t.Fatalf("command %d (%s): Apply %v, Replay %v", i, cmd.Kind(), errLoud, errQuiet)
		}
	}
	if snapshotHash(t, loud) != snapshotHash(t, quiet) {
		t.Fatal("Replay left another state than Apply")
	}
	var a, b uint64
	loud.Read(func(s *State) { a = s.PublicListChangedAt() })
	quiet.Read(func(s *State) { b = s.PublicListChangedAt() })
	if a != b || a == 0 {
		t.Fatalf("public listing versions %d and %d", a, b)
	}
}

// rawString, which looks at 8 bytes at a time, takes exactly the strings encoding/json
// gives unchanged, wherever in the string the byte that matters is (the closing quote
// too: strings of every length).
func TestRawStringEveryPosition(t *testing.T) {
	odd := []string{`\`, "\x00", "\x1f", " ", "\x7f", "\x80", "é", "\xe2\x80\xa8", "\xff", "~"}
	for n := 0; n < 20; n++ {
		for p := 0; p <= n; p++ {
			for _, o := range odd {
				s := strings.Repeat("a", p) + o + strings.Repeat("b", n-p)
				b := []byte(`"` + s + `",`)
				r := &jsonReader{b: b}
				got, ok := r.rawString()
				var want string
				err := json.Unmarshal(b[:len(b)-1], &want)
				plain := err == nil && want == s
				if ok != plain || ok && (string(got) != s || r.i != len(b)-1) {
					t.Fatalf("%q: rawString %q %v (at %d), encoding/json %q %v", b, got, ok, r.i, want, err)
				}
			}
		}
	}
}
