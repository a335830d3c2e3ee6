package engine

import (
	"encoding/binary"
	"encoding/json"
	"math/bits"
	"unicode/utf8"
)

// Hand-written journal decoding, the reverse of wire.go: recovery replays tens of
// thousands of records, and encoding/json's reflection costs about 12 µs for a record
// (docs/behaviour.md#recovery-at-memory-speed). DecodeEnvelope reads the envelope
// and the hot commands' JSON by hand and gives exactly what json.Unmarshal gives; anything
// it does not expect (an unknown envelope or command field, a kind without a decoder, an
// escape in a name, a null, whitespace oddities, a duplicate key) goes to encoding/json
// instead, so records written by newer or older versions read the same either way.

// fastDecoder is a command that reads its own JSON; decodeJSON reports false for
// anything it does not expect (the caller then uses encoding/json on a fresh command).
type fastDecoder interface {
	decodeJSON(r *jsonReader) bool
}

// DecodeEnvelope decodes a journal record into e, as json.Unmarshal(b, e) does.
func DecodeEnvelope(b []byte, e *Envelope) error {
	if decodeEnvelopeFast(b, e) {
		return nil
	}
	*e = Envelope{}
	return e.UnmarshalJSON(b)
}

// decodeEnvelopeFast decodes the envelope as wire.go and MarshalJSON write it: "k"
// first, then "t", "s", "a", "d" and the optional "i", in that order (laidOut) or in
// any order, each once.
func decodeEnvelopeFast(b []byte, e *Envelope) bool {
	*e = Envelope{}
	r := &jsonReader{b: b}
	if !r.byte('{') || !r.keyIs("k") {
		return false
	}
	kind, ok := r.rawString()
	if !ok {
		return false
	}
	mk, ok := registry[string(kind)]
	if !ok {
		return false // the slow path names the unknown kind
	}
	at := r.i
	if r.laidOut(e, mk) {
		return true
	}
	*e, r.i = Envelope{}, at
	var seen uint8
	for r.byte(',') {
		key, ok := r.key()
		if !ok || len(key) != 1 {
			return false
		}
		var bit uint8
		switch key[0] {
		case 't':
			bit, ok = 1, r.int64(&e.Time)
		case 's':
			bit, ok = 2, r.uint64(&e.Seed)
		case 'a':
			bit, ok = 4, r.actor(&e.Actor)
		case 'd':
			bit = 8
			e.Cmd, ok = r.command(mk)
		case 'i':
			bit = 16
			e.Keyed, ok = r.keyed()
		default:
			return false // unknown field: encoding/json decides
		}
		if !ok || seen&bit != 0 {
			return false
		}
		seen |= bit
	}
	return seen&8 != 0 && r.byte('}') && r.end()
}

// laidOut reads the rest of an envelope laid out as AppendJSON and MarshalJSON write it
// ("t", "s", "a" with "k" and "j", "d", then "i" if any; no whitespace), matching the
// keys and punctuation as one literal each instead of reading them; false for any
// other layout (decodeEnvelopeFast then reads the keys;
// docs/behaviour.md#recovery-at-memory-speed).
func (r *jsonReader) laidOut(e *Envelope, mk func() Command) bool {
	if !r.lit(`,"t":`) || !r.int64(&e.Time) || !r.lit(`,"s":`) || !r.uint64(&e.Seed) || !r.lit(`,"a":{"k":`) {
		return false
	}
	kind, ok := r.rawString()
	if !ok || !r.lit(`,"j":`) || !r.id(&e.Actor.Judge) || !r.lit(`},"d":`) {
		return false
	}
	e.Actor.Kind = actorKind(kind)
	if e.Cmd, ok = r.command(mk); !ok {
		return false
	}
	if r.lit(`,"i":`) {
		if e.Keyed, ok = r.keyed(); !ok {
			return false
		}
	}
	return r.lit("}") && r.end()
}

// lit consumes s if the bytes at r.i are s.
func (r *jsonReader) lit(s string) bool {
	if len(r.b)-r.i >= len(s) && string(r.b[r.i:r.i+len(s)]) == s {
		r.i += len(s)
		return true
	}
	return false
}

// command decodes a command of the kind mk makes, by hand when it has a decoder.
func (r *jsonReader) command(mk func() Command) (Command, bool) {
	start := r.i
	cmd := mk()
	if r.peek() == '{' {
		decoded, known := r.decodeCommand(cmd)
		if decoded {
			return cmd, true
		}
		if known {
			r.i, cmd = start, mk()
		}
	}
	raw, ok := r.skipValue()
	if !ok || json.Unmarshal(raw, cmd) != nil {
		return nil, false
	}
	return cmd, true
}

// decodeCommand decodes cmd by its own decoder, if it has one (known). The hot
// commands are called by their types: a call through the fastDecoder interface makes
// the reader escape, an allocation per record; the others get a copy of it.
func (r *jsonReader) decodeCommand(cmd Command) (decoded, known bool) {
	switch c := cmd.(type) {
	case *JudgeNext:
		return c.decodeJSON(r), true
	case *JudgeFinish:
		return c.decodeJSON(r), true
	case *JudgeNotes:
		return c.decodeJSON(r), true
	case *JudgeRank:
		return c.decodeJSON(r), true
	case *JudgeStar:
		return c.decodeJSON(r), true
	case *JudgeSkip:
		return c.decodeJSON(r), true
	}
	d, known := cmd.(fastDecoder)
	if !known {
		return false, false
	}
	own := *r
	decoded = d.decodeJSON(&own)
	r.i = own.i
	return decoded, true
}

// keyed decodes an idempotency record (Envelope.Keyed). It is rare next to the
// commands and its kept body is escaped JSON, so encoding/json reads it.
func (r *jsonReader) keyed() (*Keyed, bool) {
	raw, ok := r.skipValue()
	if !ok {
		return nil, false
	}
	k := new(Keyed)
	if json.Unmarshal(raw, k) != nil {
		return nil, false
	}
	return k, true
}

// actor decodes {"k":kind,"j":id} (each optional, once, no other field).
func (r *jsonReader) actor(a *Actor) bool {
	*a = Actor{}
	var seen uint8
	return r.object(func(key []byte) bool {
		switch {
		case string(key) == "k" && seen&1 == 0:
			seen |= 1
			s, ok := r.rawString()
			a.Kind = actorKind(s)
			return ok
		case string(key) == "j" && seen&2 == 0:
			seen |= 2
			return r.id(&a.Judge)
		}
		return false
	})
}

// actorKind is the actor kind s, the known kinds without a copy.
func actorKind(s []byte) ActorKind {
	switch string(s) {
	case string(ActorJudge):
		return ActorJudge
	case string(ActorAdmin):
		return ActorAdmin
	case string(ActorSystem):
		return ActorSystem
	}
	return ActorKind(s)
}

// jsonReader reads JSON from b by hand. Every method reports false (and the caller
// gives up) for anything outside the narrow shape Podium writes.
type jsonReader struct {
	b []byte
	i int
}

func (r *jsonReader) ws() {
	for r.i < len(r.b) && jsonSpace[r.b[r.i]] {
		r.i++
	}
}

// jsonSpace[c]: c is whitespace between JSON tokens.
var jsonSpace = [256]bool{' ': true, '\n': true, '\t': true, '\r': true}

// peek returns the next byte after whitespace, 0 at the end.
func (r *jsonReader) peek() byte {
	r.ws()
	if r.i < len(r.b) {
		return r.b[r.i]
	}
	return 0
}

// byte consumes c (after whitespace) if it is next.
func (r *jsonReader) byte(c byte) bool {
	if r.peek() == c {
		r.i++
		return true
	}
	return false
}

// end reports whether only whitespace is left.
func (r *jsonReader) end() bool {
	r.ws()
	return r.i == len(r.b)
}

// rawString reads a string without escapes or control characters, in valid UTF-8 (what
// encoding/json would give unchanged); the bytes alias b. It looks at 8 bytes at a time
// for the first one that is not plain ASCII text (docs/behaviour.md#recovery-at-memory-speed).
func (r *jsonReader) rawString() ([]byte, bool) {
	if !r.byte('"') {
		return nil, false
	}
	b, start := r.b, r.i
	ascii := true
	for i := start; i < len(b); {
		if i+8 <= len(b) {
			m := specialBytes(binary.LittleEndian.Uint64(b[i:]))
			if m == 0 {
				i += 8
				continue
			}
			i += bits.TrailingZeros64(m) >> 3
		}
		switch c := b[i]; {
		case c == '"':
			r.i = i + 1
			s := b[start:i]
			return s, ascii || utf8.Valid(s)
		case c == '\\' || c < 0x20:
			return nil, false
		case c >= utf8.RuneSelf:
			ascii = false
		}
		i++
	}
	return nil, false
}

// specialBytes marks (high bit of the byte) the bytes of w, 8 bytes little-endian, that
// end plain ASCII text in a JSON string: '"', '\\', a control character or a byte of a
// multi-byte character. Marks above the lowest one may be wrong (a borrow), the lowest
// is exact.
func specialBytes(w uint64) uint64 {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	zero := func(v uint64) uint64 { return (v - ones) & ^v & highs }
	return zero(w^('"'*ones)) | zero(w^('\\'*ones)) | (w-0x20*ones)&^w&highs | w&highs
}

// text reads a string; one with escapes goes through encoding/json.
func (r *jsonReader) text(s *string) bool {
	start := r.i
	if raw, ok := r.rawString(); ok {
		*s = string(raw)
		return true
	}
	r.i = start
	r.ws()
	start = r.i
	if !r.byte('"') {
		return false
	}
	for ; r.i < len(r.b); r.i++ {
		switch r.b[r.i] {
		case '\\':
			r.i++
		case '"':
			r.i++
			return json.Unmarshal(r.b[start:r.i], s) == nil
		}
	}
	return false
}

// key reads an object key and its colon.
func (r *jsonReader) key() ([]byte, bool) {
	k, ok := r.rawString()
	return k, ok && r.byte(':')
}

// keyIs reads the key want and its colon.
func (r *jsonReader) keyIs(want string) bool {
	k, ok := r.key()
	return ok && string(k) == want
}

// object reads {"key":value,...}, calling field after each key to read its value.
func (r *jsonReader) object(field func(key []byte) bool) bool {
	if !r.byte('{') {
		return false
	}
	if r.byte('}') {
		return true
	}
	for {
		k, ok := r.key()
		if !ok || !field(k) {
			return false
		}
		if r.byte('}') {
			return true
		}
		if !r.byte(',') {
			return false
		}
	}
}

// id reads an id string (24 lowercase hex digits, as ParseID): a quote, the digits and
// a quote (no hex digit is a byte that ends a string or needs a closer look).
func (r *jsonReader) id(id *ID) bool {
	r.ws()
	b, i := r.b, r.i
	if len(b)-i < 2*len(id)+2 || b[i] != '"' || b[i+2*len(id)+1] != '"' || !idFromHex(b[i+1:i+2*len(id)+1], id) {
		return false
	}
	r.i = i + 2*len(id) + 2
	return true
}

// idFromHex parses 24 lowercase hex digits, as ParseID, 8 digits at a time
// (docs/behaviour.md#recovery-at-memory-speed: a fit's record holds 15,000 ids).
func idFromHex(s []byte, id *ID) bool {
	if len(s) != 2*len(id) {
		return false
	}
	var v ID
	for k := 0; k < 3; k++ {
		w, ok := hex8(binary.LittleEndian.Uint64(s[8*k:]))
		if !ok {
			return false
		}
		binary.LittleEndian.PutUint32(v[4*k:], w)
	}
	*id = v
	return true
}

// hex8 decodes 8 lowercase hex digits, the first in the low byte of w, to 4 bytes (the
// first in the low byte), reporting false if any byte is not a lowercase hex digit.
func hex8(w uint64) (uint32, bool) {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	// With every byte below 0x80, adding a constant below 0x80 to each carries into no
	// other byte: the high bit then says whether the byte reached a bound.
	atLeast := func(lo uint64) uint64 { return (w + (0x80-lo)*ones) & highs }
	above := func(hi uint64) uint64 { return (w + (0x7f-hi)*ones) & highs }
	digit := atLeast('0') &^ above('9')
	letter := atLeast('a') &^ above('f')
	if w&highs != 0 || digit|letter != highs {
		return 0, false
	}
	nib := w&(0x0f*ones) + letter>>7*9 // '0'..'9' → 0..9, 'a'..'f' → 1..6 + 9
	v := (nib<<4 | nib>>8) & 0x00ff00ff00ff00ff
	v = (v | v>>8) & 0x0000ffff0000ffff
	return uint32(v | v>>16), true
}

// readList reads null (nil) or an array whose elements elem reads; an empty array
// gives an empty, non-nil slice, as encoding/json does.
func readList[T any](r *jsonReader, out *[]T, capHint int, elem func(*T) bool) bool {
	if r.literal("null") {
		*out = nil
		return true
	}
	if !r.byte('[') {
		return false
	}
	list := make([]T, 0, capHint)
	if !r.byte(']') {
		for {
			var zero T
			list = append(list, zero) // read in place: a local would escape to elem
			if !elem(&list[len(list)-1]) {
				return false
			}
			if r.i < len(r.b) && r.b[r.i] == ',' { // the journal's layout: no whitespace
				r.i++
				continue
			}
			if r.byte(']') {
				break
			}
			if !r.byte(',') {
				return false
			}
		}
	}
	*out = list
	return true
}

// ids reads null (nil) or an array of ids.
func (r *jsonReader) ids(out *[]ID) bool { return readList(r, out, 16, r.id) }

// floats reads null (nil) or an array of numbers; hint is how many there probably are.
func (r *jsonReader) floats(out *[]float64, hint int) bool {
	return readList(r, out, hint, r.float)
}

// ints reads null (nil) or an array of integers; hint is how many there probably are.
func (r *jsonReader) ints(out *[]int, hint int) bool { return readList(r, out, hint, r.int) }

// literal consumes the word w (true, false, null) if it is next.
func (r *jsonReader) literal(w string) bool {
	r.ws()
	if len(r.b)-r.i >= len(w) && string(r.b[r.i:r.i+len(w)]) == w {
		r.i += len(w)
		return true
	}
	return false
}

// bool reads true or false (a null goes to encoding/json, which leaves the field).
func (r *jsonReader) bool(v *bool) bool {
	switch {
	case r.literal("true"):
		*v = true
	case r.literal("false"):
		*v = false
	default:
		return false
	}
	return true
}

// skipValue returns the bytes of the next value (checked by whoever decodes them):
// up to the comma or closing bracket that ends it outside strings and brackets.
func (r *jsonReader) skipValue() ([]byte, bool) {
	r.ws()
	b, start, depth := r.b, r.i, 0
	for i := start; i < len(b); i++ {
		switch b[i] {
		case '"':
			for i++; i < len(b) && b[i] != '"'; i++ {
				if b[i] == '\\' {
					i++
				}
			}
			if i >= len(b) {
				return nil, false
			}
		case '{', '[':
			depth++
		case '}', ']':
			if depth == 0 {
				r.i = i
				return b[start:i], i > start
			}
			depth--
		case ',':
			if depth == 0 {
				r.i = i
				return b[start:i], i > start
			}
		}
	}
	return nil, false
}
