package persist

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"sort"
	"testing"

	"github.com/dgraph-io/badger/v4"

	"podium/persist/internal/disk"
	"podium/persist/store"
)

// The Badger keys of the snapshot store that these tests look at (the layout is in
// persist/store/store.go).
var (
	prefixJournal  = []byte("j/")
	prefixSnapshot = []byte("s/")
	keySnapPointer = []byte("m/snapshot")
)

func snapKey(id uint64, n int) []byte {
	k := make([]byte, len(prefixSnapshot)+12)
	copy(k, prefixSnapshot)
	binary.BigEndian.PutUint64(k[2:], id)
	binary.BigEndian.PutUint32(k[10:], uint32(n))
	return k
}

// storePointer reads the current snapshot's pointer.
func storePointer(st *store.Store) (store.Pointer, bool, error) {
	_, p, found, err := st.LoadSnapshot()
	return p, found, err
}

// snapshotIDs lists the snapshot ids that have chunks in the store.
func snapshotIDs(t *testing.T, st *store.Store) []uint64 {
	t.Helper()
	var ids []uint64
	err := st.View(func(txn *badger.Txn) error {
		it := txn.NewIterator(badger.IteratorOptions{Prefix: prefixSnapshot})
		defer it.Close()
		for it.Rewind(); it.Valid(); it.Next() {
			id := binary.BigEndian.Uint64(it.Item().Key()[len(prefixSnapshot):])
			if len(ids) == 0 || ids[len(ids)-1] != id {
				ids = append(ids, id)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return ids
}

// segFiles lists the journal's segment files in dir.
func segFiles(t *testing.T, dir string) []string {
	t.Helper()
	m, _ := filepath.Glob(filepath.Join(dir, "*.seg"))
	sort.Strings(m)
	return m
}

// treeDigest hashes every file under dir (names, sizes, contents).
func treeDigest(t *testing.T, dir string) string {
	t.Helper()
	h := sha256.New()
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		fmt.Fprintf(h, "%s %d %x\n", p, len(b), sha256.Sum256(b))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("%x", h.Sum(nil))
}

// legacyRecord is a record of the Badger journal of data directories from before the
// file journal.
type legacyRecord struct {
	Seq     uint64
	Payload []byte
}

// writeLegacyJournal writes records into the Badger journal as that version did (each
// inline: j/<seq:8 BE> = crc32c(payload) (4 bytes BE), 0, payload).
func writeLegacyJournal(st *store.Store, recs []legacyRecord) error {
	return st.Update(func(txn *badger.Txn) error {
		for _, r := range recs {
			k := binary.BigEndian.AppendUint64(append([]byte(nil), prefixJournal...), r.Seq)
			v := binary.BigEndian.AppendUint32(nil, crc32.Checksum(r.Payload, disk.CRCTable))
			if err := txn.Set(k, append(append(v, 0), r.Payload...)); err != nil {
				return err
			}
		}
		return nil
	})
}
