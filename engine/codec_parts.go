package engine

import (
	"bytes"
	"runtime"
	"sync"
)

// A big snapshot's judges and projects are read in parts, one goroutine per core
// (docs/behaviour.md#recovery-at-memory-speed), when the object is laid out as this
// version writes it; otherwise in one pass (byID).

// idLayout is how this version writes an object of values by id: each value starts
// with its "id" (the key again) and then the field second; the state field after the
// object follows it as next.
type idLayout struct{ second, next string }

var (
	judgesLayout   = idLayout{second: `"code":`, next: `},"judge_order":`} // Judge.appendJSON
	projectsLayout = idLayout{second: `"name":`, next: `},"flags":`}       // Project's json tags
)

// byIDInParts reads null or an object of values by id, each read by read into a new
// value: in parts when it is big and laid out as l says.
func byIDInParts[T any](r *jsonReader, out *map[ID]*T, l idLayout, read func(*jsonReader, *T) bool) bool {
	if n := runtime.GOMAXPROCS(0); n > 1 && r.peek() == '{' {
		if cuts := l.cuts(r.b, r.i, min(n, 8)); len(cuts) > 0 {
			start := r.i
			if readInParts(r, out, cuts, read) {
				return true
			}
			r.i = start
		}
	}
	return byID(r, out, func(v *T) bool { return read(r, v) })
}

// readInParts reads the object starting at r.i, cut at the commas cuts between its
// entries, each part on a goroutine of its own, and merges the parts.
func readInParts[T any](r *jsonReader, out *map[ID]*T, cuts []int, read func(*jsonReader, *T) bool) bool {
	parts := make([]map[ID]*T, len(cuts)+1)
	oks := make([]bool, len(parts))
	end := 0 // where the last part stopped: after the object's closing brace
	var wg sync.WaitGroup
	for k := 1; k < len(parts); k++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			pr := &jsonReader{b: r.b, i: cuts[k-1] + 1}
			stop := -1
			if k < len(cuts) {
				stop = cuts[k]
			}
			parts[k] = map[ID]*T{}
			oks[k] = entriesUntil(pr, parts[k], stop, read)
			if stop < 0 {
				end = pr.i
			}
		}()
	}
	parts[0] = map[ID]*T{}
	r.i++ // the object's opening brace (cuts found it)
	oks[0] = entriesUntil(r, parts[0], cuts[0], read)
	wg.Wait()
	m := parts[0]
	for k, part := range parts {
		if !oks[k] {
			return false
		}
		if k == 0 {
			continue
		}
		for id, v := range part {
			if _, dup := m[id]; dup {
				return false
			}
			m[id] = v
		}
	}
	*out, r.i = m, end
	return true
}

// entriesUntil reads values by id ("id":{...}, separated by commas) into m from r.i,
// up to the comma at stop, or (stop < 0) through the object's closing brace.
func entriesUntil[T any](r *jsonReader, m map[ID]*T, stop int, read func(*jsonReader, *T) bool) bool {
	for {
		k, ok := r.key()
		var id ID
		if !ok || !r.idText(k, &id) {
			return false
		}
		if _, dup := m[id]; dup {
			return false
		}
		v := new(T)
		m[id] = v
		if !read(r, v) {
			return false
		}
		switch {
		case r.i == stop:
			return true
		case r.byte('}'):
			return stop < 0
		case !r.byte(','):
			return false
		}
	}
}

// cuts returns up to n-1 places to cut the object that starts at b[from] into n parts
// of about the same size: commas between two values as l lays them out
// (`},"ID":{"id":"ID",second`, which no string can hold: its quotes are not escaped),
// before l.next. None when the object is under 1 MiB or laid out otherwise; a wrong
// cut only makes a part fail to read.
func (l idLayout) cuts(b []byte, from, n int) []int {
	end := bytes.Index(b[from:], []byte(l.next))
	if end < 1<<20 {
		return nil
	}
	end += from
	var cuts []int
	for k := 1; k < n; k++ {
		p := from + (end-from)*k/n
		if len(cuts) > 0 && p <= cuts[len(cuts)-1] {
			continue
		}
		if c := l.boundary(b, p, end); c >= 0 {
			cuts = append(cuts, c)
		}
	}
	return cuts
}

// boundary returns the position of the first comma between two values after p (before
// end), -1 when there is none.
func (l idLayout) boundary(b []byte, p, end int) int {
	anchor := []byte(`":{"id":"`)
	const hexLen = 2 * len(ID{})
	for p < end {
		i := bytes.Index(b[p:end], anchor)
		if i < 0 {
			return -1
		}
		m := p + i // the quote that closes the key
		p = m + 1
		v := m + len(anchor)
		after := v + hexLen + len(`",`)
		if m < hexLen+3 || after+len(l.second) > end || b[m-hexLen-1] != '"' || b[m-hexLen-2] != ',' || b[m-hexLen-3] != '}' {
			continue
		}
		key, val := b[m-hexLen:m], b[v:v+hexLen]
		var id ID
		if bytes.Equal(key, val) && idFromHex(key, &id) && string(b[v+hexLen:after]) == `",` && string(b[after:after+len(l.second)]) == l.second {
			return m - hexLen - 2
		}
	}
	return -1
}
