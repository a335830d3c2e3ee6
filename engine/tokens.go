package engine

import "sync"

// tokenMirror is a copy of the state's token index (token hash → judge) that request
// handlers read without the engine's lock. Every judge request authenticates by token;
// taking the engine's read lock for it made about a fifth of those requests, and an
// eighth of the writer's commands, wait for each other under a flood of judge actions
// (execution trace of the ratio benchmark). The writer keeps it in step with the index
// in the same command (login, logout, deletion, reindex after a reset or a restore), so
// it answers what State.JudgeByToken answers, existence of the judge included: an entry
// is removed when its judge is deleted. Like every read, it may show a command that is
// applied but not yet durable.
type tokenMirror struct {
	mu sync.RWMutex
	m  map[string]ID
}

func (t *tokenMirror) set(hash string, id ID) {
	if t == nil {
		return
	}
	t.mu.Lock()
	t.m[hash] = id
	t.mu.Unlock()
}

func (t *tokenMirror) del(hash string) {
	if t == nil {
		return
	}
	t.mu.Lock()
	delete(t.m, hash)
	t.mu.Unlock()
}

// reset makes the mirror a copy of index.
func (t *tokenMirror) reset(index map[string]ID) {
	if t == nil {
		return
	}
	m := make(map[string]ID, len(index))
	for h, id := range index {
		m[h] = id
	}
	t.mu.Lock()
	t.m = m
	t.mu.Unlock()
}

func (t *tokenMirror) get(hash []byte) (ID, bool) {
	t.mu.RLock()
	id, ok := t.m[string(hash)]
	t.mu.RUnlock()
	return id, ok
}

// JudgeIDByTokenHash returns the judge whose session token hashes to hash (hex), without
// the engine's lock (see tokenMirror).
func (e *Engine) JudgeIDByTokenHash(hash []byte) (ID, bool) {
	if len(hash) == 0 {
		return ID{}, false
	}
	return e.tokens.get(hash)
}

// setToken and delToken change the token index and its mirror together.
func (s *State) setToken(hash string, id ID) {
	s.tokenIndex[hash] = id
	s.tokens.set(hash, id)
}

func (s *State) delToken(hash string) {
	delete(s.tokenIndex, hash)
	s.tokens.del(hash)
}
