package engine

// Idempotent judge writes (docs/behaviour.md#on-the-floor): a judge write sent with an
// Idempotency-Key carries the key in its envelope (Envelope.Keyed). The first command
// with a key applies as usual and its answer is kept in the state, so a repeat of the
// same request is answered from the record and applies nothing, also after a restart
// (the record travels in the journal and the snapshot) and a failover (every replica
// applies the same log).

import (
	"encoding/hex"
	"encoding/json"
)

// KeyTTL is how long (ms, command time) a kept answer is kept at least.
const KeyTTL = 24 * 60 * 60 * 1000

// MaxKeysPerJudge bounds the kept answers of one judge: beyond it the judge's oldest
// goes, even if younger than KeyTTL (a phone on the floor makes a few hundred writes a
// day).
const MaxKeysPerJudge = 2000

// MaxKeyLen is the longest Idempotency-Key accepted.
const MaxKeyLen = 255

// ValidKey reports whether k may be an Idempotency-Key: 1–255 visible ASCII characters.
func ValidKey(k string) bool {
	if len(k) == 0 || len(k) > MaxKeyLen {
		return false
	}
	for i := 0; i < len(k); i++ {
		if k[i] < 0x21 || k[i] > 0x7e {
			return false
		}
	}
	return true
}

// Keyed is the idempotency key of a judge's write as it travels with the command in the
// journal, the raft log and a forwarded request. Request fingerprints the request
// (method, path, body) so that a reuse of the key for another request is told apart.
// Status and Body are the answer, filled in when the command applied.
type Keyed struct {
	Key     string `json:"k"`
	Request string `json:"r"`
	Status  int    `json:"s,omitempty"`
	Body    string `json:"b,omitempty"`
}

// KeptAnswer is the answer kept for one key of one judge.
type KeptAnswer struct {
	Judge   ID     `json:"judge"`
	Key     string `json:"key"`
	Request string `json:"request"`
	Time    int64  `json:"time"`
	Status  int    `json:"status"`
	Body    string `json:"body"`
}

// Replayed is the refusal of a repeated request: it changes nothing, and the caller
// answers with the kept status and body (and Idempotent-Replayed: true).
type Replayed struct {
	Status int
	Body   []byte
}

// Error describes the replay (it is not a failure of the request).
func (r *Replayed) Error() string { return "replayed: the request was applied before" }

type keyRef struct {
	judge ID
	key   string
}

// keyIndex finds kept answers by judge and key: the absolute position in State.Keys
// (position + base, base counting the answers dropped from the front).
type keyIndex struct {
	base     int
	pos      map[keyRef]int
	perJudge map[ID]int
	dead     int // entries of State.Keys dropped by MaxKeysPerJudge (Key "")
}

func init() {
	reindexHooks = append(reindexHooks, func(s *State) { s.indexKeys() })
}

func (s *State) indexKeys() {
	x := &keyIndex{pos: make(map[keyRef]int, len(s.Keys)), perJudge: map[ID]int{}}
	for i, k := range s.Keys {
		if k.Key == "" {
			x.dead++
			continue
		}
		ref := keyRef{k.Judge, k.Key}
		if _, dup := x.pos[ref]; !dup {
			x.perJudge[k.Judge]++
		}
		x.pos[ref] = i
	}
	s.keys = x
}

// checkKey runs before a keyed command applies at time now: it refuses a repeat
// (Replayed) or a key reused for another request (422). An answer older than KeyTTL
// counts as gone. It changes nothing: a refused command leaves the state as it was.
func (s *State) checkKey(judge ID, k *Keyed, now int64) error {
	i, ok := s.keys.pos[keyRef{judge, k.Key}]
	if !ok {
		return nil
	}
	kept := &s.Keys[i-s.keys.base]
	if now-kept.Time > KeyTTL {
		return nil
	}
	if kept.Request != k.Request {
		return &Error{Kind: KindUnprocessable, Msg: "this Idempotency-Key was used for another request"}
	}
	return &Replayed{Status: kept.Status, Body: []byte(kept.Body)}
}

// keepKey records the answer of a keyed command that applied at time now, after
// dropping the answers older than KeyTTL. A record replayed from the journal brings
// its answer; a new one gets res's.
func (s *State) keepKey(judge ID, k *Keyed, now int64, res any) {
	if k.Status == 0 {
		k.Status, k.Body = 200, string(ReplyBody(res))
	}
	s.expireKeys(now)
	x := s.keys
	if x.perJudge[judge] >= MaxKeysPerJudge {
		s.dropOldestKey(judge)
	}
	ref := keyRef{judge, k.Key}
	if _, old := x.pos[ref]; old {
		x.perJudge[judge]-- // an expired answer of the same key, still listed: replaced
	}
	x.pos[ref] = len(s.Keys) + x.base
	x.perJudge[judge]++
	s.Keys = append(s.Keys, KeptAnswer{Judge: judge, Key: k.Key, Request: k.Request, Time: now, Status: k.Status, Body: k.Body})
}

// expireKeys drops the answers kept for longer than KeyTTL (they are in time order).
func (s *State) expireKeys(now int64) {
	x := s.keys
	n := 0
	for n < len(s.Keys) && now-s.Keys[n].Time > KeyTTL {
		s.forgetKey(n)
		n++
	}
	if n == 0 {
		return
	}
	if n == len(s.Keys) {
		s.Keys, x.base = nil, 0
		return
	}
	s.Keys = s.Keys[n:]
	x.base += n
}

// forgetKey takes the kept answer at position i of State.Keys out of the index (unless
// a newer answer of the same key replaced it there).
func (s *State) forgetKey(i int) {
	x, k := s.keys, &s.Keys[i]
	if k.Key == "" {
		x.dead--
		return
	}
	ref := keyRef{k.Judge, k.Key}
	if x.pos[ref] != i+x.base {
		return
	}
	delete(x.pos, ref)
	if x.perJudge[k.Judge]--; x.perJudge[k.Judge] <= 0 {
		delete(x.perJudge, k.Judge)
	}
}

// dropOldestKey drops judge's oldest kept answer, leaving an empty entry in its place;
// the entries are compacted once half of them are empty.
func (s *State) dropOldestKey(judge ID) {
	x := s.keys
	for i := range s.Keys {
		if k := &s.Keys[i]; k.Key != "" && k.Judge == judge && x.pos[keyRef{judge, k.Key}] == i+x.base {
			s.forgetKey(i)
			*k = KeptAnswer{Judge: judge, Time: k.Time}
			x.dead++
			break
		}
	}
	if x.dead*2 > len(s.Keys) {
		live := make([]KeptAnswer, 0, len(s.Keys)-x.dead)
		for _, k := range s.Keys {
			if k.Key != "" {
				live = append(live, k)
			}
		}
		s.Keys = live
		s.indexKeys()
	}
}

// ReplyBody is the JSON body a judge write answers with result res: {"ok":1} for a
// command without a result, the next answer for next, the undo answer for undo.
func ReplyBody(res any) []byte {
	switch r := res.(type) {
	case NextResult:
		return r.AppendJSON(make([]byte, 0, 120))
	case UndoResult:
		return r.AppendJSON(make([]byte, 0, 80+len(r.Notes)))
	case nil:
		return []byte(`{"ok":1}`)
	}
	b, err := json.Marshal(res)
	if err != nil {
		return []byte(`{"ok":1}`)
	}
	return b
}

// AppendJSON appends the answer of POST /api/judge/next: a project id and the upcoming
// ones, or a reason and no project_id key at all.
func (r NextResult) AppendJSON(b []byte) []byte {
	if r.Reason != "" {
		return append(appendJSONString(append(b, `{"reason":`...), r.Reason), '}')
	}
	b = append(b, `{"project_id":"`...)
	b = append(hex.AppendEncode(b, r.ProjectID[:]), `","upcoming":[`...)
	for i, id := range r.Upcoming {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendID(b, id)
	}
	return append(b, "]}"...)
}
