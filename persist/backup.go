package persist

import (
	"bufio"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"time"

	"github.com/rs/zerolog"
	"podium/persist/store"
)

// A backup file is gzip-compressed JSON: a header line with the format, the journal
// sequence and the time, then the engine snapshot. It is consistent by construction:
// the writer captured the state between two commands.

// BackupHeader is the first line of a backup file.
type BackupHeader struct {
	Format  string `json:"format"`
	Version int    `json:"version"`
	Seq     uint64 `json:"seq"`
	SavedAt int64  `json:"saved_at"`
}

const backupFormat = "podium-backup"

var backupNameRE = regexp.MustCompile(`^podium-[0-9]{8}T[0-9]{6}(\.[0-9]{3})?Z-[0-9]+(-[a-z-]+)?(-[0-9]+)?\.json\.gz$`)

// validBackupName reports whether name has the shape of a backup file name (and so
// cannot escape the backup directory).
func validBackupName(name string) bool { return backupNameRE.MatchString(name) }

// BackupDir is where backups of the data directory dir live.
func BackupDir(dir string) string { return filepath.Join(dir, "backups") }

// Backup writes a backup of the current state and returns its file name.
func (n *Node) Backup() (string, error) {
	if n.dirty.Load() {
		return "", ErrReadOnly
	}
	var encode func(io.Writer) error
	var seq uint64
	if e := n.do(func() { encode, seq = n.eng.Capture() }); e != nil {
		return "", e
	}
	return WriteBackup(n.dir, n.opts.Now(), encode, seq, "")
}

// BackupPath returns the path of a named backup, or an error when the name is not a
// backup name or the file does not exist.
func (n *Node) BackupPath(name string) (string, error) { return BackupPath(n.dir, name) }

// BackupPath returns the path of a named backup of the data directory dataDir, or an
// error when the name is not a backup name or the file does not exist.
func BackupPath(dataDir, name string) (string, error) {
	if !validBackupName(name) {
		return "", errors.New("not a backup name")
	}
	p := filepath.Join(BackupDir(dataDir), name)
	if _, err := os.Stat(p); err != nil {
		return "", err
	}
	return p, nil
}

// WriteBackup writes the state that encode streams out (the engine's state at seq) as
// a new backup file of the data directory dataDir, named after at, seq and tag.
func WriteBackup(dataDir string, at time.Time, encode func(io.Writer) error, seq uint64, tag string) (string, error) {
	dir := BackupDir(dataDir)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("create backup dir: %w", err)
	}
	now := at.UTC()
	base := fmt.Sprintf("podium-%s-%d", now.Format("20060102T150405.000Z"), seq)
	if tag != "" {
		base += "-" + tag
	}
	name := base + ".json.gz"
	for i := 2; ; i++ {
		if _, err := os.Stat(filepath.Join(dir, name)); errors.Is(err, os.ErrNotExist) {
			break
		}
		name = fmt.Sprintf("%s-%d.json.gz", base, i)
	}
	tmp, err := os.CreateTemp(dir, ".backup-*")
	if err != nil {
		return "", fmt.Errorf("create backup: %w", err)
	}
	defer os.Remove(tmp.Name())
	bw := bufio.NewWriterSize(tmp, 1<<20)
	zw := gzip.NewWriter(bw)
	hdr, _ := json.Marshal(BackupHeader{Format: backupFormat, Version: 1, Seq: seq, SavedAt: now.UnixMilli()})
	_, err = zw.Write(append(hdr, '\n'))
	if err == nil {
		err = encode(zw)
	}
	if err == nil {
		err = zw.Close()
	}
	if err == nil {
		err = bw.Flush()
	}
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return "", fmt.Errorf("write backup: %w", err)
	}
	if err := os.Rename(tmp.Name(), filepath.Join(dir, name)); err != nil {
		return "", fmt.Errorf("name backup: %w", err)
	}
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync()
		d.Close()
	}
	return name, nil
}

// ReadBackup decodes a backup file: its header and the engine's state.
func ReadBackup(r io.Reader) (BackupHeader, []byte, error) {
	var h BackupHeader
	zr, err := gzip.NewReader(r)
	if err != nil {
		return h, nil, fmt.Errorf("not a podium backup (gzip): %w", err)
	}
	br := bufio.NewReader(zr)
	line, err := br.ReadBytes('\n')
	if err != nil {
		return h, nil, fmt.Errorf("not a podium backup: %w", err)
	}
	if err := json.Unmarshal(line, &h); err != nil || h.Format != backupFormat {
		return h, nil, errors.New("not a podium backup (bad header)")
	}
	data, err := io.ReadAll(br)
	if err != nil {
		return h, nil, fmt.Errorf("read backup: %w", err)
	}
	return h, data, nil
}

// Restore loads a backup file into dir, which must be empty or not exist yet. The
// server started on dir afterwards holds exactly the backed-up state.
func Restore(file, dir string, log zerolog.Logger) error {
	f, err := os.Open(file)
	if err != nil {
		return err
	}
	defer f.Close()
	h, data, err := ReadBackup(f)
	if err != nil {
		return err
	}
	// Check that the snapshot decodes before touching the directory.
	var probe map[string]json.RawMessage
	if err := json.Unmarshal(data, &probe); err != nil {
		return fmt.Errorf("backup state does not decode: %w", err)
	}
	if entries, err := os.ReadDir(dir); err == nil && len(entries) > 0 {
		return fmt.Errorf("%s is not empty: restore only into an empty data directory", dir)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	st, err := store.Open(dir, log)
	if err != nil {
		return err
	}
	// The restored snapshot was last "up" when the backup was taken: a clock that ran
	// then (with clock_sync off) comes back paused at that moment, not at restore time.
	savedAt := h.SavedAt
	if savedAt <= 0 {
		savedAt = time.Now().UnixMilli()
	}
	if err := st.WriteSnapshot(data, h.Seq, savedAt); err != nil {
		st.Close()
		return err
	}
	return st.Close()
}
