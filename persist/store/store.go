// Package store is Podium's snapshot store: the Badger database that holds a node's
// snapshots (a single node's state snapshots and a cluster node's raft snapshots), and
// in data directories from before the file journal the old journal, read once to
// migrate it. It knows nothing of the engine or of raft.
package store

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/dgraph-io/badger/v4"
	"github.com/rs/zerolog"
	"golang.org/x/sys/unix"

	"podium/persist/internal/disk"
)

// Key layout in Badger:
//
//	j/<seq:8 BE>          journal record: crc32c(payload) (4 bytes BE) + payload (JSON envelope)
//	s/<id:8 BE>/<n:4 BE>  snapshot chunk n of snapshot id
//	m/snapshot            pointer to the current snapshot (JSON snapPointer)
var (
	prefixJournal  = []byte("j/")
	prefixSnapshot = []byte("s/")
	keySnapPointer = []byte("m/snapshot")
)

const snapChunkSize = 1 << 20

// snapChunksPerTxn chunks go into one Badger transaction (one synced value-log write).
const snapChunksPerTxn = 4

// Pointer says which snapshot is current and which journal sequence it covers.
type Pointer struct {
	ID      uint64 `json:"id"`
	Seq     uint64 `json:"seq"`
	Chunks  int    `json:"chunks"`
	Size    int    `json:"size"`
	SavedAt int64  `json:"saved_at"` // ms
	CRC     uint32 `json:"crc"`
	// Enc is how the stored bytes encode the state: "" the JSON itself, "s2" an S2
	// stream of it (klauspost/compress) of Raw bytes. Size and CRC are of what is stored.
	Enc string `json:"enc,omitempty"`
	Raw int    `json:"raw,omitempty"`
}

// Store is the Badger database holding the snapshots (and, in data directories from
// before the file journal, the old journal that is migrated on first start).
//
// Badger writes through memory maps of sparse files, so on a full disk a write can
// kill the process with SIGBUS. The store therefore writes only when the filesystem
// has room to spare (minFree plus twice the last snapshot), and a store opened on a
// nearly full disk is opened read-only (or not at all on a new directory) and reopened
// for writing once space is back.
type Store struct {
	dir    string
	log    zerolog.Logger
	db     *badger.DB // nil when it could not be opened (new directory on a full disk)
	ro     bool       // opened read-only
	snapMu sync.Mutex // one snapshot write at a time; guards db and ro
	// trimmed: journal records (and parts) up to this sequence are known deleted in
	// this run, so the next trim starts after it (guarded by snapMu).
	trimmed uint64
	// lastSize is the size of the last snapshot written or read (guarded by snapMu).
	lastSize int64
	// freeSpace reports the bytes available in dir (tests may replace it).
	freeSpace func(dir string) (int64, error)
	// dropPending are the chunk prefixes of replaced snapshots not dropped yet, and
	// droppedAt when the last drop ran (guarded by snapMu; see dropReplaced).
	dropPending [][]byte
	droppedAt   time.Time
}

func journalKey(seq uint64) []byte {
	k := make([]byte, len(prefixJournal)+8)
	copy(k, prefixJournal)
	binary.BigEndian.PutUint64(k[len(prefixJournal):], seq)
	return k
}

func snapKey(id uint64, n int) []byte {
	k := make([]byte, len(prefixSnapshot)+12)
	copy(k, prefixSnapshot)
	binary.BigEndian.PutUint64(k[2:], id)
	binary.BigEndian.PutUint32(k[10:], uint32(n))
	return k
}

func snapPrefix(id uint64) []byte {
	k := make([]byte, len(prefixSnapshot)+8)
	copy(k, prefixSnapshot)
	binary.BigEndian.PutUint64(k[2:], id)
	return k
}

// Open opens (or creates) the Badger database in dir with settings sized for
// Podium's small data and with synchronous writes (every commit is fsynced).
func Open(dir string, log zerolog.Logger) (*Store, error) {
	db, err := openBadger(dir, log, false)
	if err != nil {
		return nil, err
	}
	return &Store{dir: dir, log: log, db: db, freeSpace: freeBytes}, nil
}

// minFree is the free space the store wants besides twice the snapshot before it lets
// Badger write (memtable flushes and compactions write new files through mmap).
const minFree = 128 << 20

// OpenForNode opens the store for a node: read-write when there is room, otherwise
// read-only (or without a database on a new directory) with a warning.
func OpenForNode(dir string, log zerolog.Logger) (*Store, error) {
	st := &Store{dir: dir, log: log, freeSpace: freeBytes}
	if err := st.roomFor(0); err == nil {
		return Open(dir, log)
	} else {
		log.Warn().Err(err).Msg("disk nearly full: the snapshot store opens read-only until space is freed")
	}
	db, err := openBadger(dir, log, true)
	if err != nil {
		if _, statErr := os.Stat(filepath.Join(dir, "MANIFEST")); statErr == nil {
			return nil, err
		}
		return st, nil // a new directory: nothing to read
	}
	st.db, st.ro = db, true
	return st, nil
}

// roomFor says whether the filesystem has room for Badger to write a snapshot of
// about size bytes.
func (st *Store) roomFor(size int64) error {
	free, err := st.freeSpace(st.dir)
	if err != nil {
		return fmt.Errorf("free space of %s: %w", st.dir, err)
	}
	if need := minFree + 2*size; free < need {
		return fmt.Errorf("only %d MiB free in %s, the snapshot store needs %d MiB to write safely", free>>20, st.dir, need>>20)
	}
	return nil
}

// writableLocked makes sure Badger may write now (reopening a read-only store when
// space is back). Caller holds snapMu.
func (st *Store) writableLocked(size int64) error {
	if err := st.roomFor(size); err != nil {
		if len(st.dropPending) == 0 {
			return err
		}
		st.dropReplaced(true) // replaced snapshots still hold space: drop them and look again
		if err := st.roomFor(size); err != nil {
			return err
		}
	}
	if st.db != nil && !st.ro {
		return nil
	}
	if st.db != nil {
		if err := st.db.Close(); err != nil {
			return fmt.Errorf("close read-only store: %w", err)
		}
		st.db = nil
	}
	db, err := openBadger(st.dir, st.log, false)
	if err != nil {
		return err
	}
	st.db, st.ro = db, false
	st.log.Info().Msg("snapshot store writable again")
	return nil
}

func freeBytes(dir string) (int64, error) {
	var fs unix.Statfs_t
	if err := unix.Statfs(dir, &fs); err != nil {
		return 0, err
	}
	return int64(fs.Bavail) * int64(fs.Bsize), nil
}

func openBadger(dir string, log zerolog.Logger, readOnly bool) (*badger.DB, error) {
	opts := badger.DefaultOptions(dir).
		WithReadOnly(readOnly).
		WithSyncWrites(true).
		WithMemTableSize(32 << 20).
		WithNumMemtables(2).
		WithBlockCacheSize(32 << 20).
		WithValueLogFileSize(64 << 20).
		WithNumVersionsToKeep(1).
		WithNumCompactors(2).
		WithDetectConflicts(false).
		WithLogger(badgerLogger{log.With().Str("component", "badger").Logger()})
	db, err := badger.Open(opts)
	if err != nil {
		return nil, fmt.Errorf("open badger in %s: %w", dir, err)
	}
	return db, nil
}

// Close closes the database. On a nearly full disk it does not: Badger's final flush
// writes through mmap and could die of SIGBUS; what it holds is already synced.
func (st *Store) Close() error {
	st.snapMu.Lock()
	defer st.snapMu.Unlock()
	if st.db == nil {
		return nil
	}
	if !st.ro {
		if err := st.roomFor(0); err != nil {
			st.db = nil
			return fmt.Errorf("snapshot store left unclosed: %w", err)
		}
	}
	db := st.db
	st.db = nil
	return db.Close()
}

// CollectGarbage reclaims value-log space left by dropped journal records and old
// snapshots, as Badger recommends doing now and then.
func (st *Store) CollectGarbage() {
	st.snapMu.Lock()
	defer st.snapMu.Unlock()
	if st.db == nil || st.ro {
		return
	}
	st.dropReplaced(true) // the GC reclaims only what was dropped
	if st.roomFor(st.lastSize) != nil {
		return
	}
	for st.db.RunValueLogGC(0.5) == nil {
	}
}

// Journal record values: crc32c of the payload (4 bytes BE), a form byte, then either the
// payload itself (recInline) or the number of parts (4 bytes BE, recParts) stored under
// p/<seq>/<n> by earlier transactions. The j/ key is written last, so a record is only
// there once all of it is.
const (
	recInline byte = 0
	recParts  byte = 1
)

var prefixParts = []byte("p/")

func partKey(seq uint64, n int) []byte {
	k := make([]byte, len(prefixParts)+12)
	copy(k, prefixParts)
	binary.BigEndian.PutUint64(k[2:], seq)
	binary.BigEndian.PutUint32(k[10:], uint32(n))
	return k
}

// decodeRecord checks a record value and returns its payload (reading parts if needed).
func (st *Store) decodeRecord(txn *badger.Txn, seq uint64, v []byte) ([]byte, bool) {
	if len(v) < 5 {
		return nil, false
	}
	want := binary.BigEndian.Uint32(v)
	var payload []byte
	switch v[4] {
	case recInline:
		payload = v[5:]
	case recParts:
		if len(v) != 9 {
			return nil, false
		}
		n := int(binary.BigEndian.Uint32(v[5:]))
		for i := 0; i < n; i++ {
			item, err := txn.Get(partKey(seq, i))
			if err != nil {
				return nil, false
			}
			if err := item.Value(func(b []byte) error { payload = append(payload, b...); return nil }); err != nil {
				return nil, false
			}
		}
	default:
		return nil, false
	}
	return payload, crc32.Checksum(payload, disk.CRCTable) == want
}

// deletePrefix deletes keys with the prefix, up to and including upTo when given.
func (st *Store) deletePrefix(prefix, upTo []byte) error {
	return st.deleteRange(prefix, nil, upTo)
}

// deleteRange deletes the keys with the prefix from from (the prefix's start when nil)
// up to and including upTo (the prefix's end when nil). Each batch resumes after the
// last key deleted: starting over at the prefix would walk every tombstone left by the
// batches before (and by earlier trims, until compaction drops them) again.
func (st *Store) deleteRange(prefix, from, upTo []byte) error {
	start := prefix
	if from != nil {
		start = from
	}
	for {
		var keys [][]byte
		err := st.db.View(func(txn *badger.Txn) error {
			it := txn.NewIterator(badger.IteratorOptions{Prefix: prefix})
			defer it.Close()
			for it.Seek(start); it.Valid() && len(keys) < 1000; it.Next() {
				k := it.Item().KeyCopy(nil)
				if upTo != nil && string(k) > string(upTo) {
					break
				}
				keys = append(keys, k)
			}
			return nil
		})
		if err != nil || len(keys) == 0 {
			return err
		}
		if err := st.db.Update(func(txn *badger.Txn) error {
			for _, k := range keys {
				if err := txn.Delete(k); err != nil {
					return err
				}
			}
			return nil
		}); err != nil {
			return err
		}
		if len(keys) < 1000 {
			return nil
		}
		start = append(keys[len(keys)-1], 0)
	}
}

// trimJournal deletes the journal records and record parts up to seq (covered by the
// current snapshot). The first trim of a run starts at the beginning, so records a
// failed earlier trim left behind go too.
func (st *Store) trimJournal(seq uint64) {
	var fromJ, fromP []byte
	if st.trimmed > 0 {
		fromJ, fromP = journalKey(st.trimmed+1), partKey(st.trimmed+1, 0)
	}
	errJ := st.deleteRange(prefixJournal, fromJ, journalKey(seq))
	errP := st.deleteRange(prefixParts, fromP, partKey(seq, 1<<31))
	if errJ == nil && errP == nil {
		st.trimmed = seq
	}
}

// ReplayLegacyJournal calls fn for every record of the legacy Badger journal after seq, in
// order. A record whose checksum fails is tolerated (reported as torn) only when it is
// the last one. It writes nothing.
func (st *Store) ReplayLegacyJournal(after uint64, fn func(seq uint64, payload []byte) error) (last uint64, torn bool, err error) {
	var tornKey []byte
	last = after
	if st.db == nil {
		return last, false, nil
	}
	err = st.db.View(func(txn *badger.Txn) error {
		it := txn.NewIterator(badger.IteratorOptions{Prefix: prefixJournal, PrefetchValues: true, PrefetchSize: 64})
		defer it.Close()
		for it.Seek(journalKey(after + 1)); it.Valid(); it.Next() {
			item := it.Item()
			k := item.Key()
			if len(k) != len(prefixJournal)+8 {
				return fmt.Errorf("journal key of bad length %d", len(k))
			}
			seq := binary.BigEndian.Uint64(k[len(prefixJournal):])
			if tornKey != nil {
				return fmt.Errorf("journal record %d is corrupt and is not the last one: refusing to start (restore a backup)", seq-1)
			}
			if seq != last+1 {
				return fmt.Errorf("journal gap: expected record %d, found %d", last+1, seq)
			}
			v, err := item.ValueCopy(nil)
			if err != nil {
				return fmt.Errorf("read journal record %d: %w", seq, err)
			}
			payload, ok := st.decodeRecord(txn, seq, v)
			if !ok {
				tornKey = item.KeyCopy(nil)
				continue
			}
			if err := fn(seq, payload); err != nil {
				return fmt.Errorf("replay journal record %d: %w", seq, err)
			}
			last = seq
		}
		return nil
	})
	return last, tornKey != nil, err
}

// badgerLogger routes Badger's log lines into zerolog.
type badgerLogger struct{ l zerolog.Logger }

func (b badgerLogger) Errorf(f string, a ...any)   { b.l.Error().Msgf(trimNL(f), a...) }
func (b badgerLogger) Warningf(f string, a ...any) { b.l.Warn().Msgf(trimNL(f), a...) }
func (b badgerLogger) Infof(f string, a ...any)    { b.l.Debug().Msgf(trimNL(f), a...) }
func (b badgerLogger) Debugf(f string, a ...any)   { b.l.Trace().Msgf(trimNL(f), a...) }

func trimNL(s string) string {
	for len(s) > 0 && s[len(s)-1] == '\n' {
		s = s[:len(s)-1]
	}
	return s
}

// DropLegacyJournal deletes the Badger journal (after the node moved it into the file
// journal), when the store is writable; a failure only wastes space.
func (st *Store) DropLegacyJournal() {
	st.snapMu.Lock()
	defer st.snapMu.Unlock()
	if st.db == nil || st.ro || st.roomFor(0) != nil {
		return
	}
	found := false
	_ = st.db.View(func(txn *badger.Txn) error {
		it := txn.NewIterator(badger.IteratorOptions{Prefix: prefixJournal})
		defer it.Close()
		it.Rewind()
		found = it.Valid()
		return nil
	})
	if !found {
		return
	}
	if st.deletePrefix(prefixJournal, nil) == nil {
		_ = st.deletePrefix(prefixParts, nil)
	}
}
