package cluster

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/dgraph-io/badger/v4"
	"github.com/hashicorp/raft"
	"github.com/rs/zerolog"
	"podium/persist/internal/disk"
	"podium/persist/store"
)

// Raft snapshots live in the node's Badger store (persist/store), streamed in
// chunks so a snapshot is never held whole in memory:
//
//	r/c/<id:8 BE>/<n:4 BE>  chunk n of raft snapshot id: crc32c(data) (4 bytes BE) + data
//	r/m/<id:8 BE>           its metadata (JSON raftSnapMeta), written last
//
// Only a snapshot whose metadata key exists is listed, so a sink cancelled or cut short
// by a crash leaves nothing visible; its chunks are deleted by Cancel or at the next
// open.
var (
	prefixRaftChunk = []byte("r/c/")
	prefixRaftMeta  = []byte("r/m/")
)

// raftChunkSize is the data carried by one chunk value (one transaction, one fsync,
// each; stored in Badger's value log). A variable so tests can make snapshots of many
// chunks from small states.
var raftChunkSize = 4 << 20

// raftSnapRetain is how many complete raft snapshots are kept.
const raftSnapRetain = 2

func raftChunkKey(id uint64, n int) []byte {
	k := make([]byte, len(prefixRaftChunk)+12)
	copy(k, prefixRaftChunk)
	binary.BigEndian.PutUint64(k[len(prefixRaftChunk):], id)
	binary.BigEndian.PutUint32(k[len(prefixRaftChunk)+8:], uint32(n))
	return k
}

func raftChunkPrefix(id uint64) []byte {
	k := make([]byte, len(prefixRaftChunk)+8)
	copy(k, prefixRaftChunk)
	binary.BigEndian.PutUint64(k[len(prefixRaftChunk):], id)
	return k
}

func raftMetaKey(id uint64) []byte {
	k := make([]byte, len(prefixRaftMeta)+8)
	copy(k, prefixRaftMeta)
	binary.BigEndian.PutUint64(k[len(prefixRaftMeta):], id)
	return k
}

// raftSnapMeta is raft's metadata plus what checks the data: chunk count and the
// crc32c of the whole data (each chunk also carries its own).
type raftSnapMeta struct {
	raft.SnapshotMeta
	Key    uint64 `json:"key"`
	Chunks int    `json:"chunks"`
	CRC    uint32 `json:"crc"`
}

// badgerSnapshots is raft's SnapshotStore on the node's Badger store. Every Badger
// access goes through the Store's lock (the store may be reopened writable when a
// full disk gets room again), and writes only happen while the store's room check
// passes, so a full disk is a sink error, never a SIGBUS.
type badgerSnapshots struct {
	st     *store.Store
	retain int
	log    zerolog.Logger

	mu     sync.Mutex
	next   uint64          // next snapshot key
	open   map[uint64]int  // readers open per snapshot key
	doomed map[uint64]bool // reaped while open: its chunks go when the last reader closes
	gcBusy atomic.Bool
}

// newBadgerSnapshots opens the raft snapshot store on st and deletes what unfinished
// snapshots left behind (and snapshots beyond the retained ones) when st is writable.
func newBadgerSnapshots(st *store.Store, retain int, log zerolog.Logger) (*badgerSnapshots, error) {
	s := &badgerSnapshots{st: st, retain: retain, log: log, open: map[uint64]int{}, doomed: map[uint64]bool{}}
	metas, err := s.all()
	if err != nil {
		return nil, err
	}
	if len(metas) > 0 { // the room check before the next snapshot counts on its size
		st.NoteSnapshotSize(metas[0].Size)
	}
	listed := make(map[uint64]bool, len(metas))
	for _, m := range metas {
		listed[m.Key] = true
		s.next = max(s.next, m.Key)
	}
	var orphans []uint64
	err = s.view(func(txn *badger.Txn) error {
		it := txn.NewIterator(badger.IteratorOptions{Prefix: prefixRaftChunk})
		defer it.Close()
		for it.Rewind(); it.Valid(); {
			k := it.Item().Key()
			if len(k) != len(prefixRaftChunk)+12 {
				return fmt.Errorf("raft snapshot chunk key of bad length %d", len(k))
			}
			id := binary.BigEndian.Uint64(k[len(prefixRaftChunk):])
			s.next = max(s.next, id)
			if !listed[id] {
				orphans = append(orphans, id)
			}
			it.Seek(raftChunkPrefix(id + 1)) // the next snapshot's chunks
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("raft snapshots: %w", err)
	}
	if !s.writable() {
		return s, nil // read-only (a full disk): cleaning up waits for a later start
	}
	for _, id := range orphans {
		if err := s.deleteChunks(id); err != nil {
			log.Warn().Err(err).Uint64("snapshot", id).Msg("could not delete the chunks of an unfinished raft snapshot")
		} else {
			log.Info().Uint64("snapshot", id).Msg("deleted the chunks of an unfinished raft snapshot")
		}
	}
	s.reap()
	return s, nil
}

// view runs fn in a read transaction (an empty view when the store has no database).
func (s *badgerSnapshots) view(fn func(txn *badger.Txn) error) error { return s.st.View(fn) }

// update runs fn in a write transaction when the filesystem has room.
func (s *badgerSnapshots) update(fn func(txn *badger.Txn) error) error { return s.st.Update(fn) }

func (s *badgerSnapshots) writable() bool { return s.st.Writable(false) == nil }

// all returns every complete snapshot, newest first (as raft orders them: term, index).
func (s *badgerSnapshots) all() ([]*raftSnapMeta, error) {
	var out []*raftSnapMeta
	err := s.view(func(txn *badger.Txn) error {
		it := txn.NewIterator(badger.IteratorOptions{Prefix: prefixRaftMeta, PrefetchValues: true})
		defer it.Close()
		for it.Rewind(); it.Valid(); it.Next() {
			m := &raftSnapMeta{}
			if err := it.Item().Value(func(v []byte) error { return json.Unmarshal(v, m) }); err != nil {
				return fmt.Errorf("raft snapshot metadata %x: %w", it.Item().Key(), err)
			}
			out = append(out, m)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("raft snapshots: %w", err)
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Term != b.Term {
			return a.Term > b.Term
		}
		if a.Index != b.Index {
			return a.Index > b.Index
		}
		return a.Key > b.Key
	})
	return out, nil
}

// List returns the retained snapshots, newest first.
func (s *badgerSnapshots) List() ([]*raft.SnapshotMeta, error) {
	metas, err := s.all()
	if err != nil {
		return nil, err
	}
	var out []*raft.SnapshotMeta
	for _, m := range metas {
		if m.Version < raft.SnapshotVersionMin || m.Version > raft.SnapshotVersionMax {
			s.log.Warn().Str("id", m.ID).Int("version", int(m.Version)).Msg("raft snapshot of an unsupported version skipped")
			continue
		}
		meta := m.SnapshotMeta
		out = append(out, &meta)
		if len(out) == s.retain {
			break
		}
	}
	return out, nil
}

// Create starts a snapshot; only its sink's successful Close makes it visible.
func (s *badgerSnapshots) Create(version raft.SnapshotVersion, index, term uint64, configuration raft.Configuration,
	configurationIndex uint64, _ raft.Transport) (raft.SnapshotSink, error) {
	if version != 1 {
		return nil, fmt.Errorf("unsupported raft snapshot version %d", version)
	}
	if err := s.st.Writable(true); err != nil {
		return nil, fmt.Errorf("raft snapshot: %w", err)
	}
	s.mu.Lock()
	s.next++
	key := s.next
	s.mu.Unlock()
	sk := &badgerSink{s: s, buf: make([]byte, 4, 4+raftChunkSize)}
	sk.meta = raftSnapMeta{Key: key, SnapshotMeta: raft.SnapshotMeta{
		Version: version, ID: fmt.Sprintf("%d-%d-%d", term, index, key), Index: index, Term: term,
		Configuration: configuration, ConfigurationIndex: configurationIndex,
	}}
	return sk, nil
}

// keyOf returns the store key of a snapshot id ("term-index-key").
func keyOf(id string) (uint64, error) {
	i := strings.LastIndexByte(id, '-')
	key, err := strconv.ParseUint(id[i+1:], 10, 64)
	if err != nil || i < 0 {
		return 0, fmt.Errorf("raft snapshot id %q is not one of this store's", id)
	}
	return key, nil
}

// Open returns a snapshot's metadata and a reader that streams its chunks, checking
// each chunk's checksum and, before the last bytes go out, the size and checksum of the
// whole: a damaged snapshot is a read error, never a wrong state.
func (s *badgerSnapshots) Open(id string) (*raft.SnapshotMeta, io.ReadCloser, error) {
	key, err := keyOf(id)
	if err != nil {
		return nil, nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.doomed[key] {
		return nil, nil, fmt.Errorf("raft snapshot %s was replaced by newer ones", id)
	}
	m := &raftSnapMeta{}
	err = s.view(func(txn *badger.Txn) error {
		item, err := txn.Get(raftMetaKey(key))
		if err != nil {
			return err
		}
		return item.Value(func(v []byte) error { return json.Unmarshal(v, m) })
	})
	if err == nil && m.ID != id {
		err = badger.ErrKeyNotFound // no database (a new directory on a full disk)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("open raft snapshot %s: %w", id, err)
	}
	s.open[key]++
	meta := m.SnapshotMeta
	return &meta, &badgerSnapReader{s: s, m: m}, nil
}

// release ends a reader; a snapshot reaped while it was read is deleted now.
func (s *badgerSnapshots) release(key uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.open[key]--; s.open[key] > 0 {
		return
	}
	delete(s.open, key)
	if s.doomed[key] {
		if err := s.deleteChunks(key); err == nil {
			delete(s.doomed, key)
		}
	}
}

// reap deletes the snapshots beyond the retained ones (metadata first, so they are no
// longer listed, then chunks; those being read keep their chunks until released). It
// then reclaims value-log space in the background.
func (s *badgerSnapshots) reap() {
	metas, err := s.all()
	if err != nil {
		s.log.Warn().Err(err).Msg("could not list raft snapshots to delete old ones")
		return
	}
	if len(metas) <= s.retain {
		return
	}
	s.mu.Lock()
	for _, m := range metas[s.retain:] {
		if err := s.update(func(txn *badger.Txn) error { return txn.Delete(raftMetaKey(m.Key)) }); err != nil {
			s.log.Warn().Err(err).Str("id", m.ID).Msg("could not delete an old raft snapshot")
			continue
		}
		if s.open[m.Key] > 0 {
			s.doomed[m.Key] = true
		} else if err := s.deleteChunks(m.Key); err != nil {
			s.log.Warn().Err(err).Str("id", m.ID).Msg("could not delete the chunks of an old raft snapshot")
		}
	}
	s.mu.Unlock()
	if s.gcBusy.CompareAndSwap(false, true) {
		go func() {
			defer s.gcBusy.Store(false)
			s.st.CollectGarbage()
		}()
	}
}

// deleteChunks deletes every chunk of a snapshot. The chunks live in the value log
// (values over Badger's 1 MiB threshold), whose space its GC only reclaims for values
// that a compaction has seen deleted; plain deletes stay in the memtable for a long
// time, so the value log would only grow. DropPrefix flushes the memtable and compacts
// the prefix away, which records the dropped values for the GC (reap runs it). It blocks
// Badger writes while it runs: every write here holds the store's lock, as this does.
func (s *badgerSnapshots) deleteChunks(key uint64) error {
	return s.st.DropPrefix(raftChunkPrefix(key))
}

// badgerSink writes a snapshot chunk by chunk; Close writes its metadata.
type badgerSink struct {
	s      *badgerSnapshots
	meta   raftSnapMeta
	buf    []byte // 4 bytes for the chunk's checksum, then its data
	closed bool
	err    error // the first write error: the sink is then unusable
}

func (k *badgerSink) ID() string { return k.meta.ID }

func (k *badgerSink) Write(p []byte) (int, error) {
	if k.closed {
		return 0, errors.New("raft snapshot sink is closed")
	}
	if k.err != nil {
		return 0, k.err
	}
	n := len(p)
	for len(p) > 0 {
		take := min(len(p), cap(k.buf)-len(k.buf))
		k.buf = append(k.buf, p[:take]...)
		p = p[take:]
		if len(k.buf) == cap(k.buf) {
			if err := k.flush(); err != nil {
				return n - len(p), err
			}
		}
	}
	return n, nil
}

// flush stores the buffered data as the next chunk.
func (k *badgerSink) flush() error {
	data := k.buf[4:]
	if len(data) == 0 {
		return nil
	}
	binary.BigEndian.PutUint32(k.buf, crc32.Checksum(data, disk.CRCTable))
	key := raftChunkKey(k.meta.Key, k.meta.Chunks)
	if err := k.s.update(func(txn *badger.Txn) error { return txn.Set(key, k.buf) }); err != nil {
		k.err = fmt.Errorf("write raft snapshot chunk: %w", err)
		return k.err
	}
	k.meta.CRC = crc32.Update(k.meta.CRC, disk.CRCTable, data)
	k.meta.Size += int64(len(data))
	k.meta.Chunks++
	k.buf = k.buf[:4] // Badger needs the value only until the transaction commits
	return nil
}

// Close stores the last chunk and the metadata (the snapshot is then listed) and
// deletes snapshots beyond the retained ones. On failure nothing is listed.
func (k *badgerSink) Close() error {
	if k.closed {
		return nil
	}
	k.closed = true
	err := k.err
	if err == nil {
		err = k.flush()
	}
	if err == nil {
		var mb []byte
		if mb, err = json.Marshal(k.meta); err == nil {
			err = k.s.update(func(txn *badger.Txn) error { return txn.Set(raftMetaKey(k.meta.Key), mb) })
		}
	}
	if err != nil {
		if e := k.s.deleteChunks(k.meta.Key); e != nil {
			k.s.log.Warn().Err(e).Str("id", k.meta.ID).Msg("chunks of a failed raft snapshot left for the next start")
		}
		return fmt.Errorf("raft snapshot %s: %w", k.meta.ID, err)
	}
	k.s.st.NoteSnapshotSize(k.meta.Size)
	k.s.reap()
	return nil
}

// Cancel drops what was written.
func (k *badgerSink) Cancel() error {
	if k.closed {
		return nil
	}
	k.closed = true
	if err := k.s.deleteChunks(k.meta.Key); err != nil {
		return fmt.Errorf("cancel raft snapshot %s: %w", k.meta.ID, err)
	}
	return nil
}

// badgerSnapReader streams a snapshot's chunks, one in memory at a time.
type badgerSnapReader struct {
	s      *badgerSnapshots
	m      *raftSnapMeta
	next   int    // next chunk to load
	buf    []byte // the loaded chunk (reused for the next one)
	cur    []byte // unread part of buf
	crc    uint32
	size   int64
	err    error
	closed bool
}

func (r *badgerSnapReader) Read(p []byte) (int, error) {
	if r.closed {
		return 0, errors.New("raft snapshot reader is closed")
	}
	for len(r.cur) == 0 {
		if r.err != nil {
			return 0, r.err
		}
		if r.next == r.m.Chunks {
			if r.next == 0 && r.m.Size != 0 {
				r.err = fmt.Errorf("raft snapshot %s is damaged: no chunks for %d bytes", r.m.ID, r.m.Size)
				continue
			}
			return 0, io.EOF
		}
		r.err = r.load()
	}
	n := copy(p, r.cur)
	r.cur = r.cur[n:]
	return n, nil
}

// load reads and checks the next chunk; the last one is handed out only when the size
// and checksum of the whole snapshot match.
func (r *badgerSnapReader) load() error {
	n := r.next
	var v []byte
	err := r.s.view(func(txn *badger.Txn) error {
		item, err := txn.Get(raftChunkKey(r.m.Key, n))
		if err != nil {
			return err
		}
		v, err = item.ValueCopy(r.buf[:0])
		return err
	})
	r.buf = v
	if err == nil && v == nil {
		err = badger.ErrKeyNotFound // no database (cannot happen once opened)
	}
	if err != nil {
		return fmt.Errorf("raft snapshot %s chunk %d: %w", r.m.ID, n, err)
	}
	if len(v) < 4 || binary.BigEndian.Uint32(v) != crc32.Checksum(v[4:], disk.CRCTable) {
		return fmt.Errorf("raft snapshot %s is damaged: chunk %d fails its checksum", r.m.ID, n)
	}
	data := v[4:]
	r.crc = crc32.Update(r.crc, disk.CRCTable, data)
	r.size += int64(len(data))
	r.next++
	if r.next == r.m.Chunks && (r.size != r.m.Size || r.crc != r.m.CRC) {
		return fmt.Errorf("raft snapshot %s is damaged: size or checksum of the whole does not match", r.m.ID)
	}
	r.cur = data
	return nil
}

func (r *badgerSnapReader) Close() error {
	if r.closed {
		return nil
	}
	r.closed = true
	r.cur = nil
	r.s.release(r.m.Key)
	return nil
}
