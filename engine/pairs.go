package engine

// pairRow holds one project's pair-comparison counts: for every other project judged by
// a judge who also judged this one, how many such judges there are. A row starts as a
// short list searched linearly; past pairIndexAt entries it gets a position index; once
// it covers a quarter of all project numbers it becomes dense (one count per number),
// which is then smaller than the list and index together and is summed without
// indirection. A dense row that thins out to a sixteenth goes back to a list. So an
// event where every project was judged alongside every other one costs a count per
// pair, and one with 10,000 projects and 20 views per judge stays sparse.
type pairRow struct {
	list  []pairCount     // sparse entries, in no order (nil while dense)
	index map[int32]int32 // other -> position in list; nil for short lists
	dense []int32         // count per project number while dense (may be shorter than the numbers: missing = 0)
	nnz   int32           // non-zero counts in dense
}

const (
	pairIndexAt  = 128 // lists longer than this get a position index
	pairDenseMin = 64  // rows are never dense in events with fewer project numbers
)

// get returns the count of the pair (this row's project, b).
func (r *pairRow) get(b int32) int32 {
	if r.dense != nil {
		if int(b) < len(r.dense) {
			return r.dense[b]
		}
		return 0
	}
	if i := r.find(b); i >= 0 {
		return r.list[i].n
	}
	return 0
}

// size returns the number of pairs with a non-zero count.
func (r *pairRow) size() int {
	if r.dense != nil {
		return int(r.nnz)
	}
	return len(r.list)
}

// each calls fn for every pair with a non-zero count.
func (r *pairRow) each(fn func(other, n int32)) {
	if r.dense != nil {
		for o, n := range r.dense {
			if n != 0 {
				fn(int32(o), n)
			}
		}
		return
	}
	for _, pc := range r.list {
		fn(pc.other, pc.n)
	}
}

func (r *pairRow) find(b int32) int {
	if r.index != nil {
		if i, ok := r.index[b]; ok {
			return int(i)
		}
		return -1
	}
	for i := range r.list {
		if r.list[i].other == b {
			return i
		}
	}
	return -1
}

// add adds d to the count of (this row's project, b); counts never go below 0 and a
// count of 0 is no entry. numbers is how many project numbers exist.
func (r *pairRow) add(b, d int32, numbers int) {
	if r.dense != nil {
		if int(b) >= len(r.dense) {
			if d <= 0 {
				return
			}
			r.dense = append(r.dense, make([]int32, numbers-len(r.dense))...)
		}
		old := r.dense[b]
		n := max(old+d, 0)
		r.dense[b] = n
		switch {
		case old == 0 && n != 0:
			r.nnz++
		case old != 0 && n == 0:
			r.nnz--
			if int(r.nnz)*16 < numbers {
				r.toSparse()
			}
		}
		return
	}
	if i := r.find(b); i >= 0 {
		r.list[i].n += d
		if r.list[i].n <= 0 {
			last := len(r.list) - 1
			moved := r.list[last]
			r.list[i] = moved
			r.list = r.list[:last]
			if r.index != nil {
				delete(r.index, b)
				if i != last {
					r.index[moved.other] = int32(i)
				}
			}
		}
		return
	}
	if d <= 0 {
		return
	}
	r.list = append(r.list, pairCount{other: b, n: d})
	if r.index != nil {
		r.index[b] = int32(len(r.list) - 1)
	}
	switch {
	case numbers >= pairDenseMin && len(r.list)*4 >= numbers:
		r.toDense(numbers)
	case r.index == nil && len(r.list) > pairIndexAt:
		r.buildIndex()
	}
}

func (r *pairRow) buildIndex() {
	r.index = make(map[int32]int32, 2*len(r.list))
	for i, pc := range r.list {
		r.index[pc.other] = int32(i)
	}
}

func (r *pairRow) toDense(numbers int) {
	r.dense = make([]int32, numbers)
	for _, pc := range r.list {
		r.dense[pc.other] = pc.n
	}
	r.nnz = int32(len(r.list))
	r.list, r.index = nil, nil
}

func (r *pairRow) toSparse() {
	list := make([]pairCount, 0, r.nnz)
	for o, n := range r.dense {
		if n != 0 {
			list = append(list, pairCount{other: int32(o), n: n})
		}
	}
	r.dense, r.nnz, r.list = nil, 0, list
	if len(list) > pairIndexAt {
		r.buildIndex()
	}
}
