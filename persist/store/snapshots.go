package store

// Snapshots in Badger: streamed into 1 MiB chunks under s/<id>/<n>, made current by
// the m/snapshot pointer, the previous one dropped after (see store.go for the keys).

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"time"

	"github.com/dgraph-io/badger/v4"
	"github.com/klauspost/compress/s2"

	"podium/persist/internal/disk"
)

// WriteSnapshot stores a snapshot covering journal records up to seq, makes it current
// atomically (pointer flip) and then drops the previous snapshot and the journal records
// it covers.
func (st *Store) WriteSnapshot(data []byte, seq uint64, savedAt int64) error {
	_, err := st.writeSnapshotPlain(func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	}, seq, savedAt)
	return err
}

// writeSnapshotPlain is WriteSnapshot for a snapshot that encode streams out: it is
// stored chunk by chunk as it is produced, so the whole snapshot is never in memory.
// It returns the snapshot's size.
func (st *Store) writeSnapshotPlain(encode func(io.Writer) error, seq uint64, savedAt int64) (int, error) {
	return st.writeSnapshotEnc(encode, seq, savedAt, "")
}

// WriteSnapshotFrom is WriteSnapshot for a snapshot that encode streams out, stored as
// an S2 stream (snapEncS2) chunk by chunk as it is produced, so the whole snapshot is
// never in memory. It returns the stored size.
func (st *Store) WriteSnapshotFrom(encode func(io.Writer) error, seq uint64, savedAt int64) (int, error) {
	return st.writeSnapshotEnc(encode, seq, savedAt, snapEncS2)
}

// snapEncS2 stores a snapshot as an S2 stream. The JSON of a state compresses about
// tenfold at a few hundred MB/s on one core, so a snapshot costs a tenth of the writes
// (the journal's fdatasyncs share the disk with them) for a little more CPU; loading
// one is faster too.
const snapEncS2 = "s2"

// writeSnapshotEnc is writeSnapshotPlain storing the snapshot encoded as enc ("" or
// snapEncS2). It returns the stored size.
func (st *Store) writeSnapshotEnc(encode func(io.Writer) error, seq uint64, savedAt int64, enc string) (int, error) {
	st.snapMu.Lock()
	defer st.snapMu.Unlock()
	if err := st.writableLocked(st.lastSize); err != nil {
		return 0, err
	}
	old, hasOld, err := st.pointer()
	if err != nil {
		return 0, err
	}
	if hasOld && old.Seq >= seq && old.Seq > 0 {
		return 0, nil // a newer (or the same) snapshot is already current
	}
	id := uint64(1)
	if hasOld {
		id = old.ID + 1
	}
	cw := &chunkWriter{st: st, id: id, buf: make([]byte, 0, snapChunkSize*snapChunksPerTxn)}
	raw := 0
	switch enc {
	case "":
		err = encode(cw)
	case snapEncS2:
		// One goroutine: snapshots stay within their share of the CPU (Node.maybeSnapshot).
		zw := s2.NewWriter(cw, s2.WriterConcurrency(1))
		cnt := &disk.CountingWriter{W: zw}
		err = encode(cnt)
		if cerr := zw.Close(); err == nil {
			err = cerr
		}
		raw = cnt.N
	default:
		err = fmt.Errorf("unknown snapshot encoding %q", enc)
	}
	if err == nil {
		err = cw.flush(true)
	}
	if err != nil {
		// Chunks of an unfinished snapshot are not referenced; drop them.
		_ = st.deletePrefix(snapPrefix(id), nil)
		return 0, err
	}
	ptr := Pointer{ID: id, Seq: seq, Chunks: cw.chunks, Size: cw.size, SavedAt: savedAt, CRC: cw.crc, Enc: enc, Raw: raw}
	pb, _ := json.Marshal(ptr)
	if err := st.db.Update(func(txn *badger.Txn) error { return txn.Set(keySnapPointer, pb) }); err != nil {
		return 0, fmt.Errorf("write snapshot pointer: %w", err)
	}
	// Clean up what the new snapshot makes unnecessary.
	if hasOld {
		st.dropPending = append(st.dropPending, snapPrefix(old.ID))
	}
	st.dropReplaced(false)
	st.trimJournal(seq)
	st.lastSize = int64(cw.size)
	return cw.size, nil
}

// snapDropEvery is how often replaced snapshots are dropped when snapshots follow
// each other faster (under a flood of commands, every second or so).
const snapDropEvery = 10 * time.Second

// dropReplaced drops the chunks of replaced snapshots: at once when the last drop is
// snapDropEvery old (at an event's pace, every snapshot drops its predecessor), else
// together with the next ones. Failures here only waste space; chunks a crash leaves
// behind are dropped at the next start (DropOrphanSnapshots). Caller holds snapMu.
//
// DropPrefix, not deletes: the chunks are in the value log, whose GC only reclaims
// values a compaction has seen deleted, and deletes of these few keys stay in the
// memtable; the value log grew by every snapshot (the cluster's snapshot store does the same).
// But each DropPrefix flushes the memtable, which allocates a fresh 32 MiB arena and
// writes a table: under a flood it was a quarter of the server's allocated bytes, hence
// one drop for several snapshots.
func (st *Store) dropReplaced(now bool) {
	if len(st.dropPending) == 0 || st.db == nil || st.ro {
		return
	}
	if !now && time.Since(st.droppedAt) < snapDropEvery {
		return
	}
	if err := st.db.DropPrefix(st.dropPending...); err != nil {
		st.log.Warn().Err(err).Int("snapshots", len(st.dropPending)).Msg("could not drop replaced snapshots; they are dropped at the next start")
	}
	st.dropPending, st.droppedAt = nil, time.Now()
}

// chunkWriter stores what is written to it as snapshot chunks of snapChunkSize bytes
// (the last one shorter; an empty snapshot is one empty chunk), with size and checksum.
type chunkWriter struct {
	st     *Store
	id     uint64
	buf    []byte
	chunks int
	size   int
	crc    uint32
}

func (cw *chunkWriter) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 {
		take := min(len(p), snapChunkSize*snapChunksPerTxn-len(cw.buf))
		cw.buf = append(cw.buf, p[:take]...)
		p = p[take:]
		if len(cw.buf) == snapChunkSize*snapChunksPerTxn {
			if err := cw.flush(false); err != nil {
				return n - len(p), err
			}
		}
	}
	return n, nil
}

// flush stores the buffered bytes as the next chunks, in one transaction (at the end,
// one empty chunk if no chunk was stored yet).
func (cw *chunkWriter) flush(final bool) error {
	if len(cw.buf) == 0 && !(final && cw.chunks == 0) {
		return nil
	}
	buf := cw.buf
	stored := 0
	if err := cw.st.db.Update(func(txn *badger.Txn) error {
		for off := 0; off < len(buf) || (off == 0 && len(buf) == 0); off += snapChunkSize {
			if err := txn.Set(snapKey(cw.id, cw.chunks+stored), buf[off:min(off+snapChunkSize, len(buf))]); err != nil {
				return err
			}
			stored++
		}
		return nil
	}); err != nil {
		return fmt.Errorf("write snapshot chunk: %w", err)
	}
	cw.crc = crc32.Update(cw.crc, disk.CRCTable, buf)
	cw.size += len(buf)
	cw.chunks += stored
	cw.buf = cw.buf[:0] // Badger needs the values only until the transaction commits
	return nil
}

// DropOrphanSnapshots drops the chunks of every snapshot the pointer does not name:
// the previous snapshot when a crash came between a new one's pointer flip and the
// DropPrefix after it (nothing else would ever drop it), or an unfinished one. One
// DropPrefix for all of them. It returns how many snapshots it dropped; a read-only
// store is left alone (a later start cleans up).
func (st *Store) DropOrphanSnapshots() (int, error) {
	st.snapMu.Lock()
	defer st.snapMu.Unlock()
	if st.db == nil || st.ro {
		return 0, nil
	}
	ptr, found, err := st.pointer()
	if err != nil {
		return 0, err
	}
	var orphans [][]byte
	err = st.db.View(func(txn *badger.Txn) error {
		it := txn.NewIterator(badger.IteratorOptions{Prefix: prefixSnapshot})
		defer it.Close()
		for it.Rewind(); it.Valid(); {
			k := it.Item().Key()
			if len(k) < len(prefixSnapshot)+8 {
				it.Next()
				continue
			}
			id := binary.BigEndian.Uint64(k[len(prefixSnapshot):])
			if !found || id != ptr.ID {
				orphans = append(orphans, snapPrefix(id))
			}
			if id == math.MaxUint64 {
				break
			}
			it.Seek(snapPrefix(id + 1)) // the next snapshot's chunks
		}
		return nil
	})
	if err != nil || len(orphans) == 0 {
		return 0, err
	}
	if err := st.db.DropPrefix(orphans...); err != nil {
		return 0, err
	}
	return len(orphans), nil
}

func (st *Store) pointer() (Pointer, bool, error) {
	var p Pointer
	found := false
	if st.db == nil {
		return p, false, nil
	}
	err := st.db.View(func(txn *badger.Txn) error {
		item, err := txn.Get(keySnapPointer)
		if errors.Is(err, badger.ErrKeyNotFound) {
			return nil
		}
		if err != nil {
			return err
		}
		found = true
		return item.Value(func(v []byte) error { return json.Unmarshal(v, &p) })
	})
	if err != nil {
		return p, false, fmt.Errorf("read snapshot pointer: %w", err)
	}
	return p, found, nil
}

// LoadSnapshot returns the current snapshot, or found=false on a new store.
func (st *Store) LoadSnapshot() (data []byte, ptr Pointer, found bool, err error) {
	ptr, found, err = st.pointer()
	if err != nil || !found {
		return nil, ptr, found, err
	}
	data = make([]byte, 0, ptr.Size)
	err = st.db.View(func(txn *badger.Txn) error {
		for n := 0; n < ptr.Chunks; n++ {
			item, err := txn.Get(snapKey(ptr.ID, n))
			if err != nil {
				return fmt.Errorf("snapshot %d chunk %d: %w", ptr.ID, n, err)
			}
			if err := item.Value(func(v []byte) error { data = append(data, v...); return nil }); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, ptr, true, err
	}
	if len(data) != ptr.Size || crc32.Checksum(data, disk.CRCTable) != ptr.CRC {
		return nil, ptr, true, fmt.Errorf("snapshot %d is corrupt (size or checksum mismatch)", ptr.ID)
	}
	st.lastSize = int64(len(data))
	switch ptr.Enc {
	case "":
	case snapEncS2:
		// Read into a buffer of exactly the decoded size (a bytes.Buffer would double
		// itself near the end to keep room for one more read: 30 MB copied for nothing).
		out := make([]byte, ptr.Raw)
		zr := s2.NewReader(bytes.NewReader(data))
		n, err := io.ReadFull(zr, out)
		if err == nil {
			var extra [1]byte
			switch m, rerr := zr.Read(extra[:]); {
			case m > 0:
				n, err = n+m, errors.New("more bytes than the pointer says")
			case rerr != io.EOF:
				err = rerr
			}
		}
		if err != nil {
			return nil, ptr, true, fmt.Errorf("snapshot %d does not decode (S2, %d of %d bytes): %v", ptr.ID, n, ptr.Raw, err)
		}
		data = out
	default:
		return nil, ptr, true, fmt.Errorf("snapshot %d is stored as %q, which this version of Podium cannot read", ptr.ID, ptr.Enc)
	}
	return data, ptr, true, nil
}
