package engine

import (
	"encoding/binary"
	"math"
	"math/bits"
	"strconv"
	"unsafe"
)

// Numbers in the hand-written journal decoder (codec.go). A fit's result is most of the
// journal's numbers: 45,000 at 10,000 projects and 5,000 judges, each rounded to 6
// decimals by the fitter. float reads such a number in one pass and converts it
// exactly without strconv (docs/behaviour.md#recovery-at-memory-speed).

// digits reads the run of decimal digits at b[i:], 8 at a time, and returns where it
// ends and its value modulo 2^64 (exact up to 19 digits).
func digits(b []byte, i int) (int, uint64) {
	var m uint64
	for ; i+8 <= len(b); i += 8 {
		x := binary.LittleEndian.Uint64(b[i:]) - 0x3030303030303030
		// A byte that is not a digit is above 9 now (or borrowed from, if below '0':
		// the borrow only reaches the bytes after it, which are not used).
		n := bits.TrailingZeros64((x+0x7676767676767676|x)&0x8080808080808080) >> 3
		if n == 0 {
			return i, m
		}
		m = m*pow10u[n] + digits8(x<<(64-8*n)) // the n digits last, after 8-n zeros
		if n < 8 {
			return i + n, m
		}
	}
	for ; i < len(b) && b[i]-'0' <= 9; i++ {
		m = m*10 + uint64(b[i]-'0')
	}
	return i, m
}

// digits8 is the value of 8 digits, each byte of x a digit's value, the first digit in
// the low byte (the pairs, then the quadruples, then the eight, by multiplications).
func digits8(x uint64) uint64 {
	x = x*10 + x>>8
	x = (x&0x000000ff000000ff*(100+1000000<<32) + x>>16&0x000000ff000000ff*(1+10000<<32)) >> 32
	return x
}

// pow10u[n] is 10^n.
var pow10u = [...]uint64{1, 10, 100, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16,
	1e17, 1e18, 1e19}

// uint reads an integer's digits (no sign, fraction or exponent, as strconv.ParseUint
// takes them) in one pass, reporting false for anything else or above max.
func (r *jsonReader) uint(max uint64) (uint64, bool) {
	b, s := r.b, r.i
	i, m := digits(b, s)
	n := i - s
	if n == 0 || n > 20 || n > 1 && b[s] == '0' {
		return 0, false // no digits, above 2^64 - 1, or a leading zero
	}
	if n == 20 { // above 2^64 - 1 or not: 19 digits times 10 plus the last
		_, m19 := digits(b[:s+19], s)
		hi, lo := bits.Mul64(m19, 10)
		var carry uint64
		m, carry = bits.Add64(lo, uint64(b[s+19]-'0'), 0)
		if hi|carry != 0 {
			return 0, false
		}
	}
	if m > max || i < len(b) && (b[i] == '.' || b[i]|0x20 == 'e') {
		return 0, false // out of range, or not an integer
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
	if m, n, ok := shortDecimal(b, i); ok {
		r.i = i + 2 + n
		f := float64(m) / exactPow10[n]
		if neg {
			f = -f
		}
		*v = f
		return true
	}
	s := i
	i, m := digits(b, i)
	nd := i - s // digits in m (it wraps beyond 19; then strconv reads the token)
	if nd == 0 || nd > 1 && b[s] == '0' {
		return false // no digits, or a leading zero: not a JSON number
	}
	e := 0
	if i < len(b) && b[i] == '.' {
		s = i + 1
		var f uint64
		i, f = digits(b, s)
		if i == s {
			return false
		}
		if i-s <= 19 {
			m = m*pow10u[i-s] + f
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
	if nd > 19 || m > 1<<53 || e < -22 || e > 22 { // tok is not empty; strconv keeps no reference to it
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

// shortDecimal reads the shape most of a fit's values have: one digit, a point and 1
// to 7 more digits ("0.012345", "1.5"), the decimals from 8 bytes at once. It returns
// the digits as an integer and how many decimals there are; ok is false for any other
// shape (and when fewer than 8 bytes follow the point), which float reads in full.
func shortDecimal(b []byte, i int) (m uint64, n int, ok bool) {
	if i+10 > len(b) || b[i]-'0' > 9 || b[i+1] != '.' {
		return 0, 0, false
	}
	x := binary.LittleEndian.Uint64(b[i+2:]) - 0x3030303030303030
	n = bits.TrailingZeros64((x+0x7676767676767676|x)&0x8080808080808080) >> 3
	if n == 0 || n == 8 || b[i+2+n]|0x20 == 'e' {
		return 0, 0, false // no decimals, maybe more than 8, or an exponent
	}
	return uint64(b[i]-'0')*pow10u[n] + digits8(x<<(64-8*n)), n, true
}
