package cluster

import (
	"encoding/binary"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/hashicorp/raft"
	"podium/persist"
	"podium/persist/journal"
)

// journalLog is raft's LogStore on Podium's journal (docs/behaviour.md#state-durability-and-recovery): every StoreLogs call is one
// append with one fdatasync, so raft's batches keep the group commit, and the journal's
// framing gives a cluster node the same torn-tail and corruption rules as a single node.
//
// A record holds: term (8 bytes LE), type (1), appended-at unix ns (8), extensions
// length (4), extensions, data.
type journalLog struct {
	j   *journal.Journal
	obs persist.Observer
	// failed is set while the last write failed (disk full, I/O error): the node reports
	// not-ready until a write succeeds again.
	failed atomic.Bool
}

const logHeader = 8 + 1 + 8 + 4

func openRaftLog(dir string, opts Options) (*journalLog, error) {
	j, err := journal.Open(dir, journal.Options{SegmentSize: opts.SegmentSize, Log: opts.Log})
	if err != nil {
		return nil, fmt.Errorf("raft log: %w", err)
	}
	if opts.JournalFault != nil {
		j.SetFault(opts.JournalFault)
	}
	return &journalLog{j: j, obs: opts.Observer}, nil
}

// IsMonotonic tells raft the log has no gaps: after a snapshot install it empties the
// log instead of leaving a gap.
func (l *journalLog) IsMonotonic() bool { return true }

func (l *journalLog) FirstIndex() (uint64, error) { return l.j.FirstIndex(), nil }
func (l *journalLog) LastIndex() (uint64, error)  { return l.j.LastIndex(), nil }

func (l *journalLog) GetLog(index uint64, out *raft.Log) error {
	b, err := l.j.Get(index)
	if errors.Is(err, journal.ErrNotFound) {
		return raft.ErrLogNotFound
	}
	if err != nil {
		return err
	}
	return decodeRaftLog(index, b, out)
}

func decodeRaftLog(index uint64, b []byte, out *raft.Log) error {
	if len(b) < logHeader {
		return fmt.Errorf("raft log record %d is too short", index)
	}
	ext := int(binary.LittleEndian.Uint32(b[17:21]))
	if len(b) < logHeader+ext {
		return fmt.Errorf("raft log record %d: bad extensions length", index)
	}
	out.Index = index
	out.Term = binary.LittleEndian.Uint64(b[0:8])
	out.Type = raft.LogType(b[8])
	out.AppendedAt = time.Time{}
	if at := int64(binary.LittleEndian.Uint64(b[9:17])); at != 0 {
		out.AppendedAt = time.Unix(0, at)
	}
	out.Extensions = nil
	if ext > 0 {
		out.Extensions = b[logHeader : logHeader+ext]
	}
	out.Data = b[logHeader+ext:]
	return nil
}

func encodeRaftLog(l *raft.Log) []byte {
	b := make([]byte, logHeader+len(l.Extensions)+len(l.Data))
	binary.LittleEndian.PutUint64(b[0:8], l.Term)
	b[8] = byte(l.Type)
	var at int64
	if !l.AppendedAt.IsZero() {
		at = l.AppendedAt.UnixNano()
	}
	binary.LittleEndian.PutUint64(b[9:17], uint64(at))
	binary.LittleEndian.PutUint32(b[17:21], uint32(len(l.Extensions)))
	copy(b[logHeader:], l.Extensions)
	copy(b[logHeader+len(l.Extensions):], l.Data)
	return b
}

func (l *journalLog) StoreLog(log *raft.Log) error { return l.StoreLogs([]*raft.Log{log}) }

// StoreLogs appends the entries with one write and one fdatasync.
func (l *journalLog) StoreLogs(logs []*raft.Log) error {
	entries := make([]journal.Entry, len(logs))
	for i, lg := range logs {
		entries[i] = journal.Entry{Index: lg.Index, Data: encodeRaftLog(lg)}
	}
	t0 := time.Now()
	err := l.j.Append(entries)
	l.obs.JournalCommitted(len(entries), time.Since(t0))
	if err != nil {
		l.failed.Store(true)
		return fmt.Errorf("raft log append: %w", err)
	}
	l.failed.Store(false)
	return nil
}

// DeleteRange drops [min, max]: a prefix (compaction after a snapshot) or a suffix (a
// conflict with the leader's log). Raft never asks for a range in the middle.
func (l *journalLog) DeleteRange(min, max uint64) error {
	first, last := l.j.FirstIndex(), l.j.LastIndex()
	if first == 0 {
		return nil
	}
	switch {
	case min <= first:
		return l.j.TruncateFront(max)
	case max >= last:
		return l.j.TruncateBack(min)
	}
	return fmt.Errorf("raft log: cannot delete %d..%d from the middle of %d..%d", min, max, first, last)
}

func (l *journalLog) Close() error { return l.j.Close() }
