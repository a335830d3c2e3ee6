package engine

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"testing"
)

// awkwardTexts are strings encoding/json escapes in every way it can (quotes,
// backslashes, HTML characters, control characters, invalid UTF-8, U+2028).
var awkwardTexts = []string{"", "ok", "great demo", `quote " and \ backslash`, "<script>&</script>",
	"tab\tnew\nline\x00nul", "héllo wörld ✓", "bad utf8 \xff\xfe", "line\u2028sep", "emoji 🎉"}

// randID returns a random id as the engine makes them.
func randID(r *rand.Rand) ID { return newID(r.Int64N(1<<40), NewRand(r.Uint64())) }

// The hand-written journal encoding must be byte for byte what encoding/json writes.
func TestAppendJSONMatchesMarshal(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	texts := awkwardTexts
	id := func() ID { return randID(r) }
	actors := []Actor{Admin, System, Public, JudgeActor(id())}
	for i := 0; i < 2000; i++ {
		var cmd Command
		switch i % 5 {
		case 0:
			cmd = &JudgeNext{Judge: id()}
			if r.IntN(2) == 0 {
				got := id()
				cmd.(*JudgeNext).Got = &got
			}
			if n := r.IntN(4); n > 0 { // the offered list, empty or up to two
				cmd.(*JudgeNext).Upcoming = make([]ID, n-1)
				for k := range cmd.(*JudgeNext).Upcoming {
					cmd.(*JudgeNext).Upcoming[k] = id()
				}
			}
		case 1:
			cmd = &JudgeFinish{Judge: id(), Notes: texts[r.IntN(len(texts))], Starred: r.IntN(2) == 0, Feedback: texts[r.IntN(len(texts))]}
		case 2:
			cmd = &JudgeSkip{Judge: id(), Reason: texts[r.IntN(len(texts))]}
		case 3:
			var ranking []ID
			if n := r.IntN(4); n > 0 {
				ranking = make([]ID, n-1)
				for k := range ranking {
					ranking[k] = id()
				}
			}
			cmd = &JudgeRank{Judge: id(), Ranking: ranking}
		case 4:
			cmd = &ClockPause{} // no hand-written encoding: falls back
		}
		env := &Envelope{Time: r.Int64(), Seed: r.Uint64(), Actor: actors[r.IntN(len(actors))], Cmd: cmd}
		want, err := env.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		got, err := env.AppendJSON([]byte("prefix"))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got[len("prefix"):], want) {
			t.Fatalf("command %d (%s):\n got %s\nwant %s", i, cmd.Kind(), got[len("prefix"):], want)
		}
		var back Envelope
		if err := back.UnmarshalJSON(got[len("prefix"):]); err != nil {
			t.Fatalf("decode: %v", err)
		}
	}
}

func BenchmarkJournalEncoding(b *testing.B) {
	env := &Envelope{Time: 1764000000000, Seed: 42, Actor: JudgeActor(ID{1, 2, 3}), Cmd: &JudgeFinish{Judge: ID{1, 2, 3}, Notes: "solid demo, good ux", Starred: true}}
	b.Run("reflection", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			if _, err := env.MarshalJSON(); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("appended", func(b *testing.B) {
		var buf []byte
		for i := 0; i < b.N; i++ {
			buf, _ = env.AppendJSON(buf[:0])
		}
	})
}

// TestAppendJSONStringMatchesMarshal: every single byte, and the awkward texts, encode
// as encoding/json encodes them.
func TestAppendJSONStringMatchesMarshal(t *testing.T) {
	texts := append([]string(nil), awkwardTexts...)
	for c := 0; c < 256; c++ {
		texts = append(texts, string([]byte{byte(c)}), "a"+string([]byte{byte(c)})+"z")
		// Every byte at every position of strings read eight bytes at a time.
		for n := 7; n <= 25; n += 9 {
			for at := 0; at < n; at++ {
				b := []byte("Plain ascii text 0123456789"[:n])
				b[at] = byte(c)
				texts = append(texts, string(b))
			}
		}
	}
	r := rand.New(rand.NewPCG(5, 6))
	for k := 0; k < 5000; k++ {
		b := make([]byte, r.IntN(40))
		for i := range b {
			b[i] = byte(0x20 + r.IntN(0x5f)) // printable ASCII, sometimes one to escape
		}
		texts = append(texts, string(b))
	}
	for _, s := range texts {
		want, _ := json.Marshal(s)
		if got := appendJSONString([]byte("x"), s); string(got) != "x"+string(want) {
			t.Fatalf("%q: %s, want %s", s, got[1:], want)
		}
	}
}

// BenchmarkAppendJSONString: typical project names and descriptions (nothing to escape).
//
//	go test ./engine -run '^$' -bench AppendJSONString
func BenchmarkAppendJSONString(b *testing.B) {
	texts := []string{"ok", "Project 1234", "ratio project 1999", "A hardware hack that sorts recycling with a camera", "Table 12, near the stage"}
	buf := make([]byte, 0, 256)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		for _, s := range texts {
			buf = appendJSONString(buf[:0], s)
		}
	}
}
