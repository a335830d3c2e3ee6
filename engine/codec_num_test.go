package engine

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"strconv"
	"testing"
)

// floatMatchesJSON fails unless the hand decoder's float reads s (the whole of it) as
// encoding/json does, bit for bit, or both refuse it.
func floatMatchesJSON(t *testing.T, s string) {
	t.Helper()
	var want float64
	errJSON := json.Unmarshal([]byte(s), &want)
	var got float64
	r := &jsonReader{b: []byte(s)}
	ok := r.float(&got) && r.end()
	if ok != (errJSON == nil) || ok && math.Float64bits(got) != math.Float64bits(want) {
		t.Fatalf("%q: float %v (%v), encoding/json %v (%v)", s, got, ok, want, errJSON)
	}
	// Inside a record, with bytes after it (the shapes read 8 bytes at a time).
	r = &jsonReader{b: []byte(s + "]0123456789e")}
	ok = r.float(&got)
	r.ws()
	if ok = ok && r.i == len(s); ok != (errJSON == nil) || ok && math.Float64bits(got) != math.Float64bits(want) {
		t.Fatalf("%q followed by more: float %v (%v, at %d), encoding/json %v (%v)", s, got, ok, r.i, want, errJSON)
	}
}

// The journal's numbers decode bit for bit as encoding/json decodes them: the fit's
// 6-decimal values (the fast path), full-precision shortest forms, exponents, zeros,
// and the limits of the fast path on either side.
func TestFloatMatchesUnmarshal(t *testing.T) {
	for _, s := range []string{"0", "-0", "0.0", "-0.0", "1", "-1", "0.5", "1e22", "1e23", "9007199254740992",
		"9007199254740993", "9007199254740992e22", "9007199254740993e-22", "1e-22", "1e-23", "123456789012345678",
		"1234567890123456789", "12345678901234567890", "0.1234567890123456789", "1.7976931348623157e308", "1e309",
		"4.9e-324", "1e-400", "1E5", "1e+05", "1e-07", "2.5E-3", "0.000001", "00", "01", "-", "1.", ".5", "1e",
		"1e+", "+1", "1x", " 1", "1 ", "0.30000000000000004", "0.1234567", "0.12345678", "-9.9999999", "1.5e3", "1.5E-3",
		"0.", "0.1.", "0.1e", "-0.000001", "05.5", "1.2345678e", "1e00000000000000000000000001", "-1e-0000000000000000000003"} {
		floatMatchesJSON(t, s)
	}
	r := rand.New(rand.NewPCG(9, 10))
	round6 := func(v float64) float64 { return math.Round(v*1e6) / 1e6 }
	for i := 0; i < 200000; i++ {
		v := r.NormFloat64() * math.Pow(10, float64(r.IntN(40)-20))
		var s []byte
		switch i % 4 {
		case 0: // what the fitter writes
			s, _ = json.Marshal(round6(v))
		case 1: // shortest form, as encoding/json writes any float64
			s, _ = json.Marshal(v)
		case 2: // a decimal of up to 17 digits, in any notation
			s = strconv.AppendFloat(nil, v, "efg"[r.IntN(3)], r.IntN(18), 64)
		case 3: // an integer of up to 20 digits, maybe with a decimal exponent
			s = strconv.AppendUint(nil, r.Uint64()>>r.IntN(64), 10)
			if r.IntN(2) == 0 {
				s = strconv.AppendInt(append(s, 'e'), int64(r.IntN(60)-30), 10)
			}
		}
		floatMatchesJSON(t, string(s))
	}
}

// FuzzNumbers: any input is read as encoding/json reads a number (float64, int64,
// uint64) or refused as it is, and as an id as ParseID reads it.
//
//	go test ./engine -run '^$' -fuzz FuzzNumbers -fuzztime 30s -parallel 1
func FuzzNumbers(f *testing.F) {
	for _, s := range []string{"0", "-0.5", "1.234567", "0.000001", "1e22", "9007199254740993", "1e-07", "12345678901234567890",
		"1.5E+300", "-9223372036854775808", "0102030405060708090a0b0c"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		floatMatchesJSON(t, s)
		intsMatchJSON(t, s)
		want, err := ParseID(s)
		var got ID
		if ok := idFromHex([]byte(s), &got); ok != (err == nil) || ok && got != want {
			t.Fatalf("%q: idFromHex %v %v, ParseID %v %v", s, got, ok, want, err)
		}
	})
}

// intsMatchJSON fails unless int64 and uint64 read s (the whole of it) as encoding/json
// does, or refuse it as it does.
func intsMatchJSON(t *testing.T, s string) {
	t.Helper()
	var wantI int64
	var wantU uint64
	errI, errU := json.Unmarshal([]byte(s), &wantI), json.Unmarshal([]byte(s), &wantU)
	var gotI int64
	var gotU uint64
	ri, ru := &jsonReader{b: []byte(s)}, &jsonReader{b: []byte(s)}
	okI, okU := ri.int64(&gotI) && ri.end(), ru.uint64(&gotU) && ru.end()
	if okI != (errI == nil) || okI && gotI != wantI || okU != (errU == nil) || okU && gotU != wantU {
		t.Fatalf("%q: int64 %d (%v), uint64 %d (%v); encoding/json %d (%v), %d (%v)", s, gotI, okI, gotU, okU, wantI, errI, wantU, errU)
	}
}

// Integers (an envelope's time and seed, a fit's counts) read as encoding/json reads
// them into int64 and uint64, at and beyond their limits too.
func TestIntegersMatchUnmarshal(t *testing.T) {
	cases := []string{"0", "-0", "7", "-7", "01", "-01", "1.0", "1e3", "1E3", "-", "", "+1", " 12", "12 ", "1x",
		"9223372036854775807", "9223372036854775808", "-9223372036854775808", "-9223372036854775809",
		"18446744073709551615", "18446744073709551616", "99999999999999999999", "000000000000000000000001",
		"01234567890123456789", "-02232520335897181225", "10000000000000000000", "-10000000000000000000"}
	r := rand.New(rand.NewPCG(11, 12))
	for i := 0; i < 20000; i++ {
		u := r.Uint64() >> r.IntN(64)
		cases = append(cases, strconv.FormatUint(u, 10), strconv.FormatInt(-int64(u), 10))
	}
	for _, s := range cases {
		intsMatchJSON(t, s)
	}
}

// idFromHex, 8 digits at a time, takes exactly what ParseID takes: every byte value at
// every position of an id.
func TestIDFromHexMatchesParseID(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 14))
	for n := 0; n < 20; n++ {
		good := []byte(randID(r).String())
		for p := range good {
			for c := 0; c < 256; c++ {
				s := append([]byte(nil), good...)
				s[p] = byte(c)
				want, err := ParseID(string(s))
				var got ID
				if ok := idFromHex(s, &got); ok != (err == nil) || ok && got != want {
					t.Fatalf("%q: idFromHex %v %v, ParseID %v %v", s, got, ok, want, err)
				}
			}
		}
	}
	for _, s := range []string{"", "0102030405060708090a0b0", "0102030405060708090a0b0c0"} {
		if idFromHex([]byte(s), new(ID)) {
			t.Fatalf("%q read as an id", s)
		}
	}
}

// digits, 8 bytes at a time, reads every run of digits to its end, whatever byte ends
// it and however many bytes follow.
func TestDigitsEveryLength(t *testing.T) {
	r := rand.New(rand.NewPCG(15, 16))
	for n := 0; n <= 19; n++ {
		for _, end := range []byte{'/', ':', '.', 'e', ',', ']', '}', ' ', 0, 0x7f, 0x80, 0xb0, 0xff} {
			for pad := 0; pad <= 9; pad++ {
				num := make([]byte, n)
				for i := range num {
					num[i] = '0' + byte(r.IntN(10))
				}
				b := append(append([]byte("x"), num...), end)
				for range pad {
					b = append(b, byte(r.IntN(256)))
				}
				i, m := digits(b, 1)
				want, _ := strconv.ParseUint(string(num), 10, 64)
				if i != 1+n || m != want {
					t.Fatalf("%q: digits ended at %d with %d, want %d and %d", b, i, m, 1+n, want)
				}
			}
		}
	}
}
