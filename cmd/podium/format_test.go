package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/csv"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"testing"
	"time"
)

// The data directories under persist/testdata/format-v1 were written by the build before the
// persist packages were split (journal, store and cluster in packages of their own):
// loadtest runs against that binary, a snapshot (the single node's at a clean stop, the
// cluster's through POST /api/admin/clock/backup), public content and more load, then
// SIGKILL, so each holds a snapshot and journal (raft log) records after it. One is a
// single node, the other a one-node raft cluster (raft log on the journal, stable store,
// FSM snapshots in Badger). The golden files hold the SHA-256 of every listed response
// after opening a copy of them (testdata/format-v1/*.golden.json), recorded by that
// build and recorded again by the build whose ratings model changed (the start's fit
// then stores other ratings, docs/behaviour.md#the-fit); `/api/judge/list` was recorded
// again when the judges' disagreement became the share of clear-cut pairs against the
// consensus without them (only `disagreement` and `compared` differed, compared field by
// field against the build before). A later build must open them
// to the same state; export columns added since are dropped before comparing
// (formatAddedColumns). (persist's TestDataDirFromEarlierBuild checks the single node's
// state digest in-process.)
//
// To record the golden files again with another binary (only when the formats or the
// ratings model change on purpose):
//
//	PODIUM_FORMAT_RECORD=/path/to/old/podium go test -run TestDataDirFromEarlierBuild ./cmd/podium
const (
	formatFixtures = "../../persist/testdata/format-v1"
	formatGoldens  = "testdata/format-v1"
)

// formatEndpoints are the responses compared: every list, export and statistic an
// organiser reads, and the public content. The single node also compares the clock (it
// comes back paused at the moment of the kill); a cluster keeps its clock running, so
// its elapsed time differs from run to run and only the state digest covers it.
var formatEndpoints = []string{
	"/api/judge/list", "/api/project/list", "/api/project/list/public",
	"/api/judge/stats", "/api/project/stats", "/api/challenges",
	"/api/admin/options", "/api/admin/stats", "/api/admin/flags", "/api/admin/results",
	"/api/admin/started",
	"/api/admin/export/judges", "/api/admin/export/projects", "/api/admin/export/rankings",
	"/api/admin/export/challenges",
	"/api/admin/content/schedule", "/api/admin/content/sponsors", "/api/admin/content/faq",
}

// formatAddedColumns are the export columns added since the golden files were recorded
// (last columns, dropped before hashing): the judges export's Conflicts
// (docs/behaviour.md#on-the-floor).
var formatAddedColumns = map[string]int{"/api/admin/export/judges": 1}

// formatAddedFields are JSON fields added since the golden files were recorded, as
// the fixtures' responses carry them (removed before hashing): projects' contact
// emails, empty in every fixture (docs/behaviour.md#after-judging).
var formatAddedFields = map[string]string{"/api/project/list": `,"contact_emails":[]`}

// withoutAddedColumns returns the CSV body b without its last n columns.
func withoutAddedColumns(t *testing.T, b []byte, n int) []byte {
	t.Helper()
	rows, err := csv.NewReader(bytes.NewReader(b)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	w := csv.NewWriter(&out)
	w.UseCRLF = bytes.Contains(b, []byte("\r\n"))
	for _, r := range rows {
		if len(r) < n {
			t.Fatalf("a row of %d columns: %q", len(r), r)
		}
		_ = w.Write(r[:len(r)-n])
	}
	w.Flush()
	return out.Bytes()
}

// formatGolden is one fixture's recorded view.
type formatGolden struct {
	Responses map[string]string `json:"responses"` // path -> SHA-256 of the body
}

func TestDataDirFromEarlierBuild(t *testing.T) {
	bin := os.Getenv("PODIUM_FORMAT_RECORD")
	for _, mode := range []string{"single", "cluster"} {
		t.Run(mode, func(t *testing.T) {
			dir := t.TempDir()
			untarFixture(t, filepath.Join(formatFixtures, mode+".tar.gz"), dir)
			data := filepath.Join(dir, mode)
			var env []string
			if mode == "cluster" {
				ports := freePorts(t, 1)
				raftAddr := fmt.Sprintf("127.0.0.1:%d", ports[0])
				// The node keeps its id; its addresses may change between runs (the
				// fixture was written on other ports).
				env = []string{"NODE_ID=node1", "RAFT_ADDR=" + raftAddr,
					"CLUSTER_PEERS=node1=" + raftAddr + "=http://127.0.0.1:1",
					"CLUSTER_SECRET=fixture-cluster-secret-0123456789abcdef"}
			}
			var p *proc
			if bin != "" {
				cmd := exec.Command(bin)
				cmd.Env = append(os.Environ(), "PORT=0", "DATA_DIR="+data, "ADMIN_PASSWORD="+killPassword, "LOG_LEVEL=warn")
				cmd.Env = append(cmd.Env, env...)
				p = startCmd(t, cmd)
			} else {
				p = startBinary(t, data, env...)
			}
			waitReady(t, p)
			if mode == "cluster" {
				// Until it leads the duties, the node reports no pending ratings (a follower
				// applies the leader's fits; a new leader fits once its log from before is
				// applied), so the start's fit is awaited only then.
				waitLeading(t, p)
			}
			p.ratingsCurrent()
			got := formatGolden{Responses: map[string]string{}}
			bodies := map[string][]byte{}
			endpoints := formatEndpoints
			if mode == "single" {
				endpoints = append(endpoints[:len(endpoints):len(endpoints)], "/api/admin/clock")
			}
			for _, path := range endpoints {
				b := p.must("GET", path, nil, "")
				if n := formatAddedColumns[path]; n > 0 && bin == "" {
					b = withoutAddedColumns(t, b, n)
				}
				if f := formatAddedFields[path]; f != "" && bin == "" {
					b = bytes.ReplaceAll(b, []byte(f), nil)
				}
				sum := sha256.Sum256(b)
				got.Responses[path] = hex.EncodeToString(sum[:])
				bodies[path] = b
			}
			if mode == "cluster" {
				// The state digest is not compared: this build's ratings model differs
				// from the fixture build's, so the start's fit stores a ratings.set
				// stamped with the time of the run (docs/behaviour.md#the-fit), and the
				// digest covers that time. Every response above is still compared, and
				// persist's test of the same name checks the replayed state's digest.
				var st clusterStatus
				if err := json.Unmarshal(p.must("GET", "/api/admin/cluster", nil, ""), &st); err != nil {
					t.Fatal(err)
				}
				if st.StateDigest.SHA256 == "" {
					t.Fatal("cluster status has no state digest")
				}
			}
			golden := filepath.Join(formatGoldens, mode+".golden.json")
			if bin != "" {
				b, _ := json.MarshalIndent(got, "", "  ")
				if err := os.WriteFile(golden, append(b, '\n'), 0o644); err != nil {
					t.Fatal(err)
				}
				t.Logf("recorded %s with %s", golden, bin)
				return
			}
			var want formatGolden
			b, err := os.ReadFile(golden)
			if err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(b, &want); err != nil {
				t.Fatal(err)
			}
			if len(want.Responses) != len(endpoints) {
				t.Fatalf("golden file lists %d responses, the test %d: record it again", len(want.Responses), len(endpoints))
			}
			paths := make([]string, 0, len(want.Responses))
			for path := range want.Responses {
				paths = append(paths, path)
			}
			sort.Strings(paths)
			for _, path := range paths {
				if got.Responses[path] != want.Responses[path] {
					body := string(bodies[path])
					if len(body) > 400 {
						body = body[:400] + "…"
					}
					t.Errorf("%s differs from what the earlier build served (body now: %s)", path, body)
				}
			}
		})
	}
}

// waitReady polls /readyz until it answers 200.
func waitReady(t *testing.T, p *proc) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		code, _, err := p.req("GET", "/readyz", nil, "")
		if err == nil && code == 200 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("not ready after 30 s (%d %v)", code, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// untarFixture unpacks a .tar.gz of a data directory into dir.
func untarFixture(t *testing.T, archive, dir string) {
	t.Helper()
	f, err := os.Open(archive)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(zr)
	for h, err := tr.Next(); err != io.EOF; h, err = tr.Next() {
		if err != nil {
			t.Fatal(err)
		}
		target := filepath.Join(dir, filepath.Clean("/"+h.Name)) // no way out of dir
		if h.Typeflag == tar.TypeDir {
			err = os.MkdirAll(target, 0o700)
		} else if h.Typeflag == tar.TypeReg {
			err = os.MkdirAll(filepath.Dir(target), 0o700)
			var out *os.File
			if err == nil {
				out, err = os.OpenFile(target, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, os.FileMode(h.Mode)&0o777)
			}
			if err == nil {
				_, err = io.Copy(out, tr)
				if cerr := out.Close(); err == nil {
					err = cerr
				}
			}
		}
		if err != nil {
			t.Fatal(err)
		}
	}
}

// waitLeading waits until the cluster node p says it is the leader and leads the
// duties (its log from before applied: the start's fit follows).
func waitLeading(t *testing.T, p *proc) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		var st clusterStatus
		if code, b, err := p.req("GET", "/api/admin/cluster", nil, ""); err == nil && code == 200 && json.Unmarshal(b, &st) == nil && st.State == "leader" && st.LeadsDuties {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("the node does not lead after 30 s")
		}
		time.Sleep(50 * time.Millisecond)
	}
}
