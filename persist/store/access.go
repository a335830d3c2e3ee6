package store

import (
	"os"
	"path/filepath"

	"github.com/dgraph-io/badger/v4"
	"github.com/rs/zerolog"
)

// Every access below holds the store's snapshot lock: the store may be reopened
// writable when a full disk gets room again, and a write happens only while the
// room check passes, so a full disk is an error, never a SIGBUS.

// Exclusive runs fn while no snapshot is written or dropped (a node reading snapshot
// and journal as one).
func (st *Store) Exclusive(fn func()) {
	st.snapMu.Lock()
	defer st.snapMu.Unlock()
	fn()
}

// View runs fn in a read transaction (not at all when the store has no database: a new
// directory on a full disk).
func (st *Store) View(fn func(txn *badger.Txn) error) error {
	st.snapMu.Lock()
	defer st.snapMu.Unlock()
	if st.db == nil {
		return nil
	}
	return st.db.View(fn)
}

// Update runs fn in a write transaction when the filesystem has room.
func (st *Store) Update(fn func(txn *badger.Txn) error) error {
	st.snapMu.Lock()
	defer st.snapMu.Unlock()
	if err := st.writableLocked(0); err != nil {
		return err
	}
	return st.db.Update(fn)
}

// DropPrefix deletes every key with the prefix when the filesystem has room. It flushes
// the memtable and compacts the prefix away, so the value-log GC can reclaim the values.
func (st *Store) DropPrefix(prefix []byte) error {
	st.snapMu.Lock()
	defer st.snapMu.Unlock()
	if err := st.writableLocked(0); err != nil {
		return err
	}
	return st.db.DropPrefix(prefix)
}

// Writable says whether the store may write now (reopening a read-only store when space
// is back), with room for a snapshot of the last one's size when forSnapshot is set.
func (st *Store) Writable(forSnapshot bool) error {
	st.snapMu.Lock()
	defer st.snapMu.Unlock()
	var size int64
	if forSnapshot {
		size = st.lastSize
	}
	return st.writableLocked(size)
}

// NoteSnapshotSize records the size of a snapshot written or found outside
// WriteSnapshot (a raft snapshot), for the room check before the next one.
func (st *Store) NoteSnapshotSize(size int64) {
	st.snapMu.Lock()
	st.lastSize = size
	st.snapMu.Unlock()
}

// OpenReadOnly opens the store of a stopped node for reading; it returns nil and no
// error when dir holds no store.
func OpenReadOnly(dir string) (*Store, error) {
	if _, err := os.Stat(filepath.Join(dir, "MANIFEST")); os.IsNotExist(err) {
		return nil, nil
	}
	db, err := openBadger(dir, zerolog.Nop(), true)
	if err != nil {
		return nil, err
	}
	return &Store{dir: dir, log: zerolog.Nop(), db: db, ro: true, freeSpace: freeBytes}, nil
}

// SetFreeSpace replaces how the store learns the free space of its directory (fault
// injection: tests of the full-disk paths without filling a disk); nil restores the
// filesystem's own figure.
func (st *Store) SetFreeSpace(fn func(dir string) (int64, error)) {
	if fn == nil {
		fn = freeBytes
	}
	st.snapMu.Lock()
	st.freeSpace = fn
	st.snapMu.Unlock()
}
