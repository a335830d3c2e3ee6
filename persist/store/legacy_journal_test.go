package store

// Writing the Badger journal of data directories from before the file journal, as that
// version did: the node only reads it (ReplayLegacyJournal), to migrate it.

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"testing"

	"github.com/dgraph-io/badger/v4"
	"github.com/rs/zerolog"

	"podium/persist/internal/disk"
)

const (
	// maxInline keeps transactions well under Badger's limit (15% of the memtable).
	maxInline = 1 << 20
	// maxTxnBytes is how much one journal transaction carries before a new one starts.
	maxTxnBytes = 2 << 20
)

// legacyRecord is one record of the Badger journal to append.
type legacyRecord struct {
	Seq     uint64
	Payload []byte
}

func encodeRecord(payload []byte) []byte {
	b := make([]byte, 5+len(payload))
	binary.BigEndian.PutUint32(b, crc32.Checksum(payload, disk.CRCTable))
	b[4] = recInline
	copy(b[5:], payload)
	return b
}

// appendLegacy writes records and returns after they are fsynced. Small records share one
// transaction (one fsync); big ones are split into parts first, and a batch over
// maxTxnBytes spans several transactions. It returns how many records (a prefix of recs)
// are durable: all of them when err is nil, possibly some when it is not.
//
// This is the journal of data directories from before the file journal (package journal):
// the node only reads it, to migrate it; tests build such directories.
func (st *Store) appendLegacy(recs []legacyRecord) (durable int, err error) {
	txn := st.db.NewTransaction(true)
	defer func() { txn.Discard() }()
	size, pending := 0, 0
	commit := func() error {
		return txn.Commit()
	}
	for _, r := range recs {
		var v []byte
		if len(r.Payload) > maxInline {
			n, err := st.writeParts(r.Seq, r.Payload)
			if err != nil {
				return durable, err
			}
			v = make([]byte, 9)
			binary.BigEndian.PutUint32(v, crc32.Checksum(r.Payload, disk.CRCTable))
			v[4] = recParts
			binary.BigEndian.PutUint32(v[5:], uint32(n))
		} else {
			v = encodeRecord(r.Payload)
		}
		if size+len(v) > maxTxnBytes && size > 0 {
			if err := commit(); err != nil {
				return durable, fmt.Errorf("journal commit: %w", err)
			}
			durable += pending
			txn = st.db.NewTransaction(true)
			size, pending = 0, 0
		}
		if err := txn.Set(journalKey(r.Seq), v); err != nil {
			return durable, fmt.Errorf("journal set %d: %w", r.Seq, err)
		}
		size += len(v) + 16
		pending++
	}
	if err := commit(); err != nil {
		return durable, fmt.Errorf("journal commit: %w", err)
	}
	return durable + pending, nil
}

func (st *Store) writeParts(seq uint64, payload []byte) (int, error) {
	n := 0
	for off := 0; off < len(payload); off += maxInline {
		end := min(off+maxInline, len(payload))
		part := payload[off:end]
		if err := st.db.Update(func(txn *badger.Txn) error { return txn.Set(partKey(seq, n), part) }); err != nil {
			return 0, fmt.Errorf("journal part %d/%d: %w", seq, n, err)
		}
		n++
	}
	return n, nil
}

// TestLegacyJournalReplay: records of the Badger journal, small ones inline and a big
// one in parts, replay in order after a given sequence; DropLegacyJournal removes them.
func TestLegacyJournalReplay(t *testing.T) {
	st, err := Open(t.TempDir(), zerolog.Nop())
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var recs []legacyRecord
	for i := uint64(1); i <= 6; i++ {
		p := []byte(fmt.Sprintf(`{"n":%d}`, i))
		if i == 4 {
			p = bytes.Repeat([]byte("x"), 2*maxInline+10)
		}
		recs = append(recs, legacyRecord{Seq: i, Payload: p})
	}
	if n, err := st.appendLegacy(recs); err != nil || n != len(recs) {
		t.Fatalf("append: %d %v", n, err)
	}
	var got []uint64
	last, torn, err := st.ReplayLegacyJournal(2, func(seq uint64, payload []byte) error {
		if !bytes.Equal(payload, recs[seq-1].Payload) {
			return fmt.Errorf("record %d differs", seq)
		}
		got = append(got, seq)
		return nil
	})
	if err != nil || torn || last != 6 || len(got) != 4 || got[0] != 3 {
		t.Fatalf("replay after 2: %v last %d torn %v err %v", got, last, torn, err)
	}
	st.DropLegacyJournal()
	if last, _, err := st.ReplayLegacyJournal(0, func(uint64, []byte) error { return nil }); err != nil || last != 0 {
		t.Fatalf("after the drop: last %d err %v", last, err)
	}
}
