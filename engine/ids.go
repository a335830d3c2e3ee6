package engine

import (
	"encoding/binary"
	"encoding/hex"
	"errors"
	"math"
)

// ID identifies a judge, project or flag. Its layout is MongoDB's ObjectId: four bytes of
// big-endian Unix seconds followed by eight unique bytes, shown as 24 lowercase hex digits.
type ID [12]byte

// ZeroID is the all-zero id (used for system-written flags).
var ZeroID ID

// errBadID is returned by ParseID for anything that is not 24 hex digits.
var errBadID = errors.New("malformed id: want 24 lowercase hex characters")

// ParseID parses the 24-hex-digit form of an ID.
func ParseID(s string) (ID, error) {
	var id ID
	if len(s) != 24 {
		return id, errBadID
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return id, errBadID
		}
	}
	if _, err := hex.Decode(id[:], []byte(s)); err != nil {
		return id, errBadID
	}
	return id, nil
}

// String returns the 24-hex-digit form.
func (id ID) String() string { return hex.EncodeToString(id[:]) }

// IsZero reports whether the id is all zeros.
func (id ID) IsZero() bool { return id == ZeroID }

// MarshalText encodes the id as hex (so ids work as JSON strings and map keys).
func (id ID) MarshalText() ([]byte, error) {
	b := make([]byte, 24)
	hex.Encode(b, id[:])
	return b, nil
}

// UnmarshalText decodes the hex form.
func (id *ID) UnmarshalText(b []byte) error {
	v, err := ParseID(string(b))
	if err != nil {
		return err
	}
	*id = v
	return nil
}

// newID derives an id from the command time and the command's random stream.
func newID(timeMs int64, r *Rand) ID {
	var id ID
	binary.BigEndian.PutUint32(id[0:4], uint32(timeMs/1000))
	binary.BigEndian.PutUint64(id[4:12], r.Uint64())
	return id
}

// Rand is a small deterministic random stream (SplitMix64). Commands carry its seed, so
// replaying a command draws the same numbers. It is not for secrets.
type Rand struct{ state uint64 }

// NewRand returns a stream starting from seed.
func NewRand(seed uint64) *Rand { return &Rand{state: seed} }

// Uint64 returns the next number of the stream.
func (r *Rand) Uint64() uint64 {
	r.state += 0x9e3779b97f4a7c15
	z := r.state
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// Float64 returns a number in [0, 1).
func (r *Rand) Float64() float64 { return float64(r.Uint64()>>11) / (1 << 53) }

// Norm returns a standard normal number (Box-Muller).
func (r *Rand) Norm() float64 {
	u := 1 - r.Float64() // (0, 1]
	v := r.Float64()
	return math.Sqrt(-2*math.Log(u)) * math.Cos(2*math.Pi*v)
}

// Intn returns a number in [0, n). n must be positive.
func (r *Rand) Intn(n int) int {
	if n <= 0 {
		return 0
	}
	return int(r.Uint64() % uint64(n))
}
