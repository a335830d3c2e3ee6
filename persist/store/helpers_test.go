package store

import (
	"encoding/binary"
	"testing"

	"github.com/dgraph-io/badger/v4"
)

// snapshotIDs lists the snapshot ids that have chunks in the store.
func snapshotIDs(t *testing.T, st *Store) []uint64 {
	t.Helper()
	var ids []uint64
	err := st.db.View(func(txn *badger.Txn) error {
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
