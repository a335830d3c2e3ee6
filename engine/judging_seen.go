package engine

// What the assignment index keeps per judge: the slots of its seen projects (a bitset,
// grown as the judge's seen list grows) and of its skipped ones.

// seenSlots are the slots of a judge's first n seen projects (those still in the index),
// as a bitset (bit k set: slot k seen), and, while skipOK, the slots of its skipped
// projects and how many skips are busy.
type seenSlots struct {
	n    int
	bits []uint64

	skipOK    bool
	skipLen   int
	skipSlots []int32
	skipBusy  int
}

// seenOf returns j's cache entry with the slots of its seen projects up to date. Between
// rebuilds of the index (any command outside the judging flow), a judge's seen list only
// grows at its end, so only the entries added since the last call are looked up.
func (x *judgingData) seenOf(j *Judge) *seenSlots {
	if x.seenSlots == nil {
		x.seenSlots = map[ID]*seenSlots{}
	}
	c := x.seenSlots[j.ID]
	if c == nil || c.n > len(j.SeenProjects) {
		c = &seenSlots{}
		x.seenSlots[j.ID] = c
	}
	for _, sp := range j.SeenProjects[c.n:] {
		if k, ok := x.slotOf[sp.ProjectID]; ok {
			w := int(k >> 6)
			if w >= len(c.bits) {
				c.bits = append(c.bits, make([]uint64, w+1-len(c.bits))...)
			}
			c.bits[w] |= 1 << (k & 63)
		}
	}
	c.n = len(j.SeenProjects)
	return c
}

// slotsFor returns the judge's cache entry (seenOf).
func (x *judgingData) slotsFor(j *Judge) *seenSlots {
	if x.seenSlots == nil {
		x.seenSlots = map[ID]*seenSlots{}
	}
	c := x.seenSlots[j.ID]
	if c == nil {
		c = &seenSlots{}
		x.seenSlots[j.ID] = c
	}
	return c
}

// skipSlotsOf returns the slots of j's skipped projects and how many of its skips are
// busy ones. Within the judging flow a judge's skips change only by a skip (one more)
// and a finish (busy ones dropped: skipsChanged); every other change rebuilds the index
// and with it this cache.
func (x *judgingData) skipSlotsOf(j *Judge) ([]int32, int) {
	c := x.slotsFor(j)
	if !c.skipOK || c.skipLen != len(j.Skipped) {
		c.skipSlots, c.skipBusy = c.skipSlots[:0], 0
		for id, busy := range j.Skipped {
			if busy {
				c.skipBusy++
			}
			if k, ok := x.slotOf[id]; ok {
				c.skipSlots = append(c.skipSlots, k)
			}
		}
		c.skipOK, c.skipLen = true, len(j.Skipped)
	}
	return c.skipSlots, c.skipBusy
}

// skipsChanged forgets the cached skips of j.
func (x *judgingData) skipsChanged(j *Judge) {
	if c := x.seenSlots[j.ID]; c != nil {
		c.skipOK = false
	}
}

// hasSeen reports whether j finished project p (whose slot is k).
func (x *judgingData) hasSeen(j *Judge, k int32) bool {
	return bitSet(x.seenOf(j).bits, k)
}

// bitSet reports whether bit k of bits is set (false beyond its end).
func bitSet(bits []uint64, k int32) bool {
	w := int(k >> 6)
	return k >= 0 && w < len(bits) && bits[w]&(1<<(k&63)) != 0
}

// The seen filter: one bit per judge and seen project, out of 128 chosen by a hash of
// the project's id. A clear bit means the judge has not seen the project, so the most
// common lookup of a finish (is the project already judged?) skips the scan of the seen
// list; a set bit may be another project's, and the list is scanned. An element taken
// out of the list leaves its bit set, which is still correct.

// seenBit returns the word and bit of project p in a seen filter.
func seenBit(p ID) (int, uint64) {
	h := idHash(p)
	return int(h >> 63), 1 << (h >> 57 & 63)
}

// idHash mixes an id's bytes into 64 bits whose top bits the id filters use.
func idHash(p ID) uint64 {
	h := (uint64(p[0]) | uint64(p[1])<<8 | uint64(p[2])<<16 | uint64(p[3])<<24 | uint64(p[4])<<32 |
		uint64(p[5])<<40 | uint64(p[6])<<48 | uint64(p[7])<<56) ^
		(uint64(p[8])|uint64(p[9])<<8|uint64(p[10])<<16|uint64(p[11])<<24)<<21
	return h * 0x9e3779b97f4a7c15
}

// mayHaveSeen reports whether p may be among j's seen projects (false: it is not),
// building the filter on first use.
func (j *Judge) mayHaveSeen(p ID) bool {
	if !j.seenBitsOK {
		j.buildSeenFilter()
	}
	w, b := seenBit(p)
	return j.seenBits[w]&b != 0
}

// buildSeenFilter builds j's filter from its seen list. The snapshot's decoder calls
// it as it reads the list, which is then in the cache: a replay's first use of each
// judge's filter would read the whole list again.
func (j *Judge) buildSeenFilter() {
	j.seenBits = [2]uint64{}
	for i := range j.SeenProjects {
		w, b := seenBit(j.SeenProjects[i].ProjectID)
		j.seenBits[w] |= b
	}
	j.seenBitsOK = true
}

// addSeen records in j's filter, if it is built, a project appended to its seen list.
func (j *Judge) addSeen(p ID) {
	if j.seenBitsOK {
		w, b := seenBit(p)
		j.seenBits[w] |= b
	}
}
