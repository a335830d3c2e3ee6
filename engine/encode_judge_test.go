package engine

import (
	"bytes"
	"encoding/json"
	"math"
	"math/rand/v2"
	"testing"
)

// TestJudgeAppendJSONMatchesMarshal: the hand-written judge encoding is byte for byte
// encoding/json's, on random judges (nil and empty slices and maps, awkward strings,
// floats of every magnitude), and fails like it on a NaN reliability.
// randJudge returns a random judge: awkward texts, nil and empty lists and maps, odd
// floats.
func randJudge(r *rand.Rand) *Judge {
	text := func() string { return awkwardTexts[r.IntN(len(awkwardTexts))] }
	id := func() ID { return randID(r) }
	ids := func() []ID {
		switch r.IntN(3) {
		case 0:
			return nil
		case 1:
			return []ID{}
		}
		out := make([]ID, 1+r.IntN(5))
		for i := range out {
			out[i] = id()
		}
		return out
	}
	floats := []float64{0, 1, -1, 0.5, 1e-7, 3.2e-9, 1e21, 1.5e22, 123456.789, math.SmallestNonzeroFloat64, math.MaxFloat64, 0.1 + 0.2}
	j := &Judge{
		ID: id(), Code: text(), Name: text(), Email: text(), Notes: text(), Track: text(),
		TokenHash: text(), Active: r.IntN(2) == 0, ReadWelcome: r.IntN(2) == 0,
		Group: r.IntN(20) - 5, GroupSeen: r.IntN(100), CurrentSince: r.Int64() - r.Int64(),
		LastLocation: r.IntN(3000) - 10, Seen: r.IntN(1000), Flagged: ids(), Rankings: ids(),
		LastActivity: r.Int64(), Reliability: floats[r.IntN(len(floats))],
		Disagreement: floats[r.IntN(len(floats))], Compared: r.IntN(5000),
	}
	if r.IntN(2) == 0 {
		j.Current = id()
	}
	if up := ids(); len(up) > 0 { // omitted when empty, so decoded as nil
		j.Upcoming = up
	}
	switch r.IntN(3) {
	case 1:
		j.SeenProjects = []SeenProject{}
	case 2:
		for k := 0; k < 1+r.IntN(6); k++ {
			j.SeenProjects = append(j.SeenProjects, SeenProject{ProjectID: id(), Starred: r.IntN(2) == 0,
				Notes: text(), Name: text(), Location: r.IntN(500) - 3, Description: text()})
		}
	}
	switch r.IntN(3) {
	case 1:
		j.Skipped = map[ID]bool{}
	case 2:
		j.Skipped = map[ID]bool{}
		for k := 0; k < 1+r.IntN(6); k++ {
			j.Skipped[id()] = r.IntN(2) == 0
		}
	}
	if r.IntN(10) == 0 {
		j.Reliability = -j.Reliability
	}
	return j
}

func TestJudgeAppendJSONMatchesMarshal(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for i := 0; i < 3000; i++ {
		j := randJudge(r)
		want, err := json.Marshal(j)
		if err != nil {
			t.Fatal(err)
		}
		got, err := j.appendJSON([]byte("prefix"))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got[len("prefix"):], want) {
			t.Fatalf("judge %d:\n got %s\nwant %s", i, got[len("prefix"):], want)
		}
	}
	bad := &Judge{Reliability: math.NaN()}
	if _, err := json.Marshal(bad); err == nil {
		t.Fatal("encoding/json accepted NaN")
	}
	if _, err := bad.appendJSON(nil); err == nil {
		t.Fatal("a NaN reliability was encoded")
	}
}

// BenchmarkEncodeJudges: one judge with 1,500 seen projects, by reflection and by hand.
func BenchmarkEncodeJudges(b *testing.B) {
	j := &Judge{ID: ID{1}, Name: "Judge 1", Email: "j1@example.com", TokenHash: "ab12", Active: true,
		Skipped: map[ID]bool{{2}: true, {3}: false}, Rankings: []ID{{4}, {5}}, Reliability: 1.25}
	for k := 0; k < 1500; k++ {
		j.SeenProjects = append(j.SeenProjects, SeenProject{ProjectID: ID{byte(k), byte(k >> 8)},
			Notes: "ok", Name: "Project name", Location: k, Description: "A project that does something useful"})
	}
	b.Run("reflection", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			if _, err := json.Marshal(j); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("appended", func(b *testing.B) {
		b.ReportAllocs()
		var buf []byte
		for i := 0; i < b.N; i++ {
			buf, _ = j.appendJSON(buf[:0])
		}
	})
}
