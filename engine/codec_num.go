package engine

import (
	"math"
	"math/bits"
	"strconv"
	"unsafe"
)

// Numbers in the hand-written journal decoder (codec.go). A fit's result is most of the
// journal's numbers: 45,000 at 10,000 projects and 5,000 judges, each rounded to 6
// decimals by the fitter. float reads such a number in one pass and converts it
// exactly without strconv (docs/behaviour.md#recovery-at-memory-speed).

// uint reads an integer's digits (no sign, fraction or exponent, as strconv.ParseUint
// takes them) in one pass, reporting false for anything else or above max.
func (r *jsonReader) uint(max uint64) (uint64, bool) {
	b, s := r.b, r.i
	i, m := s, uint64(0)
	for ; i < len(b) && b[i]-'0' <= 9 && i-s < 19; i++ { // below 10^19: no overflow
		m = m*10 + uint64(b[i]-'0')
	}
	if i < len(b) && b[i]-'0' <= 9 { // a 20th digit
		hi, lo := bits.Mul64(m, 10)
		var carry uint64
		m, carry = bits.Add64(lo, uint64(b[i]-'0'), 0)
		if i++; hi|carry != 0 || i < len(b) && b[i]-'0' <= 9 {
			return 0, false // beyond 2^64 - 1
		}
	}
	if i == s || i-s > 1 && b[s] == '0' || m > max || i < len(b) && (b[i] == '.' || b[i]|0x20 == 'e') {
		return 0, false // no digits, a leading zero, out of range, or not an integer
	}
	r.i = i
	return m, true
}

func (r *jsonReader) int64(v *int64) bool {
	r.ws()
	max := uint64(math.MaxInt64)
	neg := r.i < len(r.b) && r.b[r.i] == '-'
	if neg {
		r.i++
		max++ // -2^63
	}
	m, ok := r.uint(max)
	if neg {
		m = -m
	}
	*v = int64(m)
	return ok
}

func (r *jsonReader) uint64(v *uint64) bool {
	r.ws()
	m, ok := r.uint(math.MaxUint64)
	*v = m
	return ok
}

// exactPow10 are the powers of ten a float64 holds exactly.
var exactPow10 = [...]float64{1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10,
	1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22}

// float reads a number as strconv.ParseFloat does (and so encoding/json). It reads the
// token once, collecting its digits as an integer m and its power of ten e. When m has
// at most 19 digits, m ≤ 2^53 and |e| ≤ 22, both m and 10^|e| are exact float64s and
// one IEEE multiplication or division rounds their product or quotient correctly
// (Clinger's fast path), which is the float64 nearest the decimal, as strconv gives;
// any other number (17-digit shortest forms, large exponents) goes to strconv.
func (r *jsonReader) float(v *float64) bool {
	r.ws()
	b, i := r.b, r.i
	neg := i < len(b) && b[i] == '-'
	if neg {
		i++
	}
	var m uint64
	s := i
	for ; i < len(b) && b[i]-'0' <= 9; i++ {
		m = m*10 + uint64(b[i]-'0')
	}
	nd := i - s // digits in m (it wraps beyond 19; then strconv reads the token)
	if nd == 0 || nd > 1 && b[s] == '0' {
		return false // no digits, or a leading zero: not a JSON number
	}
	e := 0
	if i < len(b) && b[i] == '.' {
		i++
		s = i
		for ; i < len(b) && b[i]-'0' <= 9; i++ {
			m = m*10 + uint64(b[i]-'0')
		}
		if i == s {
			return false
		}
		nd, e = nd+i-s, s-i
	}
	if i < len(b) && b[i]|0x20 == 'e' {
		i++
		sign := 1
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			if b[i] == '-' {
				sign = -1
			}
			i++
		}
		x := 0
		for s = i; i < len(b) && b[i]-'0' <= 9; i++ {
			if x < 10000 {
				x = x*10 + int(b[i]-'0')
			}
		}
		if i == s {
			return false
		}
		e += sign * x
	}
	tok := b[r.i:i]
	r.i = i
	if nd > 19 || m > 1<<53 || e < -22 || e > 22 {
		f, err := strconv.ParseFloat(unsafe.String(&tok[0], len(tok)), 64)
		*v = f
		return err == nil
	}
	f := float64(m)
	if e < 0 {
		f /= exactPow10[-e]
	} else {
		f *= exactPow10[e]
	}
	if neg {
		f = -f
	}
	*v = f
	return true
}
