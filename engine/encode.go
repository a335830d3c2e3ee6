package engine

import (
	"bytes"
	"encoding/json"
	"io"
	"reflect"
	"slices"
	"strings"
)

// EncodeTo writes the same JSON as json.Marshal(s), one part at a time: each judge,
// project, flag and log line is encoded on its own and written out, so a snapshot or
// backup never holds a buffer the size of the whole state (a 30 MB event needed 100 MB
// of growing buffers with json.Marshal). TestEncodeToMatchesMarshal keeps the two equal.
func (s *State) EncodeTo(w io.Writer) error {
	e := &streamEncoder{w: w}
	v := reflect.ValueOf(s).Elem()
	t := v.Type()
	e.raw("{")
	first := true
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" {
			continue
		}
		if fv := v.Field(i); opts == "omitempty" && ((fv.Kind() == reflect.Slice || fv.Kind() == reflect.Map) && fv.Len() == 0 || fv.Kind() == reflect.Int && fv.Int() == 0 || fv.Kind() == reflect.Uint64 && fv.Uint() == 0 || fv.Kind() == reflect.Pointer && fv.IsNil()) {
			continue // as encoding/json omits it
		}
		if name == "" {
			name = f.Name
		}
		if !first {
			e.raw(",")
		}
		first = false
		e.value(name)
		e.raw(":")
		e.field(v.Field(i))
	}
	e.raw("}")
	return e.err
}

type streamEncoder struct {
	w   io.Writer
	err error
	buf []byte // reused by the hand-written encodings
}

func (e *streamEncoder) raw(s string) {
	if e.err == nil {
		_, e.err = io.WriteString(e.w, s)
	}
}

func (e *streamEncoder) value(v any) {
	if e.err != nil {
		return
	}
	// The bulk of a state (judges with their seen lists, map keys, log lines) is
	// appended by hand, byte for byte what encoding/json writes; the rest by reflection.
	switch x := v.(type) {
	case *Judge:
		if x != nil {
			e.buf, e.err = x.appendJSON(e.buf[:0])
			if e.err == nil {
				_, e.err = e.w.Write(e.buf)
			}
			return
		}
	case ID:
		e.buf = appendID(e.buf[:0], x)
		_, e.err = e.w.Write(e.buf)
		return
	case string:
		e.buf = appendJSONString(e.buf[:0], x)
		_, e.err = e.w.Write(e.buf)
		return
	}
	b, err := json.Marshal(v)
	if err != nil {
		e.err = err
		return
	}
	_, e.err = e.w.Write(b)
}

var idType = reflect.TypeFor[ID]()

// field writes one field of State: maps keyed by ID entry by entry in key order (as
// encoding/json orders them: by the key's text, and hex text orders like the bytes),
// slices element by element, anything else whole.
func (e *streamEncoder) field(v reflect.Value) {
	switch {
	case v.Kind() == reflect.Map && v.Type().Key() == idType && !v.IsNil():
		// Keys and values read through reusable Values (SetIterKey/SetIterValue): no
		// allocation per entry, and pointer values come out of Interface without one.
		type entry struct {
			k ID
			v any
		}
		entries := make([]entry, 0, v.Len())
		key := reflect.New(idType)
		val := reflect.New(v.Type().Elem()).Elem()
		for it := v.MapRange(); it.Next(); {
			key.Elem().SetIterKey(it)
			val.SetIterValue(it)
			entries = append(entries, entry{*key.Interface().(*ID), val.Interface()})
		}
		slices.SortFunc(entries, func(a, b entry) int { return bytes.Compare(a.k[:], b.k[:]) })
		e.raw("{")
		for i := range entries {
			if i > 0 {
				e.raw(",")
			}
			e.value(entries[i].k)
			e.raw(":")
			e.value(entries[i].v)
		}
		e.raw("}")
	case v.Kind() == reflect.Slice && !v.IsNil() && v.Type().Elem().Kind() == reflect.String:
		// The audit log (up to 60,000 lines): appended into one buffer, written 64 KiB at
		// a time.
		ss := v.Convert(reflect.TypeFor[[]string]()).Interface().([]string)
		b := append(e.buf[:0], '[')
		for i, x := range ss {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendJSONString(b, x)
			if len(b) >= 64<<10 {
				e.write(b)
				b = b[:0]
			}
		}
		e.write(append(b, ']'))
		e.buf = b[:0]
	case v.Kind() == reflect.Slice && !v.IsNil() && v.Type().Elem().Kind() != reflect.Uint8:
		e.raw("[")
		for i := 0; i < v.Len(); i++ {
			if i > 0 {
				e.raw(",")
			}
			e.value(v.Index(i).Interface())
		}
		e.raw("]")
	default:
		e.value(v.Interface())
	}
}

func (e *streamEncoder) write(b []byte) {
	if e.err == nil {
		_, e.err = e.w.Write(b)
	}
}
