package cluster

import (
	"fmt"
	"io"
	"os"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"
	"github.com/rs/zerolog"
	"podium/persist/store"
)

// openRaftSnapshots returns a cluster node's raft snapshot store: Badger, after
// importing the newest file snapshot of a data directory from an earlier version. When
// that import fails (a full disk, a damaged file) the node uses the file store for this
// run, as the earlier version did, and the import is tried again at the next start.
func openRaftSnapshots(st *store.Store, old string, hl hclog.Logger, log zerolog.Logger) (raft.SnapshotStore, error) {
	s, err := newBadgerSnapshots(st, raftSnapRetain, log)
	if err != nil {
		return nil, err
	}
	if _, err := importFileSnapshots(s, old, hl, log); err != nil {
		log.Error().Err(err).Msg("could not import the raft snapshot of the file store into Badger: the file store stays in use for this run")
		fs, ferr := raft.NewFileSnapshotStoreWithLogger(old, raftSnapRetain, hl)
		if ferr != nil {
			return nil, fmt.Errorf("%v; and the file store cannot be opened either: %w", err, ferr)
		}
		return fs, nil
	}
	return s, nil
}

// importFileSnapshots moves the newest raft snapshot of a data directory from before
// the Badger snapshot store (raft's file store in old, e.g. DATA_DIR/raft/snapshots)
// into s, once: only when s holds no snapshot. The data is streamed through (raft's
// file store checks its CRC). The directory is then renamed to <old>.migrated; it is
// left as it was when the import fails.
func importFileSnapshots(s *badgerSnapshots, old string, hl hclog.Logger, log zerolog.Logger) (imported bool, err error) {
	if fi, err := os.Stat(old); err != nil || !fi.IsDir() {
		return false, nil
	}
	have, err := s.List()
	if err != nil {
		return false, err
	}
	if len(have) > 0 {
		return false, nil // imported by an earlier start (the rename may have failed)
	}
	fs, err := raft.NewFileSnapshotStoreWithLogger(old, raftSnapRetain, hl)
	if err != nil {
		return false, fmt.Errorf("open the old raft snapshots in %s: %w", old, err)
	}
	metas, err := fs.List()
	if err != nil {
		return false, fmt.Errorf("list the old raft snapshots in %s: %w", old, err)
	}
	if len(metas) == 0 {
		return false, nil
	}
	t0 := time.Now()
	meta, rc, err := fs.Open(metas[0].ID)
	if err != nil {
		return false, fmt.Errorf("open the old raft snapshot %s: %w", metas[0].ID, err)
	}
	defer rc.Close()
	sink, err := s.Create(meta.Version, meta.Index, meta.Term, meta.Configuration, meta.ConfigurationIndex, nil)
	if err != nil {
		return false, err
	}
	n, err := io.Copy(sink, rc)
	if err == nil && n != meta.Size {
		err = fmt.Errorf("read %d of its %d bytes", n, meta.Size)
	}
	if err != nil {
		_ = sink.Cancel()
		return false, fmt.Errorf("import the old raft snapshot %s: %w", meta.ID, err)
	}
	if err := sink.Close(); err != nil {
		return false, err
	}
	log.Info().Str("from", meta.ID).Str("id", sink.ID()).Uint64("index", meta.Index).Int64("bytes", n).
		Dur("took", time.Since(t0)).Msg("raft snapshot imported from the file store into Badger")
	to := old + ".migrated"
	if _, err := os.Stat(to); err == nil {
		to = fmt.Sprintf("%s.migrated-%d", old, time.Now().Unix())
	}
	if err := os.Rename(old, to); err != nil {
		log.Warn().Err(err).Str("dir", old).Msg("could not rename the imported raft snapshot directory; it is no longer used")
	}
	return true, nil
}

// RaftSnapshots lists the raft snapshots kept in a stopped cluster node's data
// directory, newest first (for tests and operators; the node must not be running).
func RaftSnapshots(dir string) ([]*raft.SnapshotMeta, error) {
	st, err := store.OpenReadOnly(dir)
	if err != nil || st == nil {
		return nil, err
	}
	defer st.Close()
	s := &badgerSnapshots{st: st, retain: raftSnapRetain, log: zerolog.Nop()}
	return s.List()
}
