package cluster

import (
	"bytes"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/raft"
	"github.com/rs/zerolog"

	"podium/engine"
	"podium/persist"
)

func TestParseClusterConfig(t *testing.T) {
	secret := strings.Repeat("s", 32)
	peers := "a=127.0.0.1:7001=http://127.0.0.1:8081,b=127.0.0.1:7002=http://127.0.0.1:8082"
	base := map[string]string{"NODE_ID": "a", "RAFT_ADDR": "127.0.0.1:7001", "CLUSTER_PEERS": peers, "CLUSTER_SECRET": secret}
	with := func(k, v string) map[string]string {
		m := map[string]string{}
		for kk, vv := range base {
			m[kk] = vv
		}
		m[k] = v
		return m
	}
	tests := []struct {
		name    string
		env     map[string]string
		wantErr string // the setting the message must name; "" = ok
	}{
		{"none set", map[string]string{}, ""},
		{"ok", base, ""},
		{"no node id", with("NODE_ID", ""), "NODE_ID"},
		{"bad node id", with("NODE_ID", "a b"), "NODE_ID"},
		{"no raft addr", with("RAFT_ADDR", ""), "RAFT_ADDR"},
		{"bad raft addr", with("RAFT_ADDR", "nope"), "RAFT_ADDR"},
		{"short secret", with("CLUSTER_SECRET", "short"), "CLUSTER_SECRET"},
		{"no peers", with("CLUSTER_PEERS", ""), "CLUSTER_PEERS"},
		{"bad peer", with("CLUSTER_PEERS", "a=127.0.0.1:7001"), "CLUSTER_PEERS"},
		{"bad peer url", with("CLUSTER_PEERS", "a=127.0.0.1:7001=ftp://x"), "CLUSTER_PEERS"},
		{"dup peer", with("CLUSTER_PEERS", peers+",a=127.0.0.1:7003=http://x:1"), "CLUSTER_PEERS"},
		{"advertise differs from peers", with("RAFT_ADVERTISE", "127.0.0.1:9999"), "CLUSTER_PEERS"},
		{"joining node not in peers", with("NODE_ID", "c"), ""},
		{"only a secret", map[string]string{"CLUSTER_SECRET": secret}, "NODE_ID"},
		{"tls cert without key and ca", with("RAFT_TLS_CERT", "/x.pem"), "RAFT_TLS_CERT, RAFT_TLS_KEY and RAFT_TLS_CA"},
		{"trailing logs not a number", with("RAFT_TRAILING_LOGS", "many"), "RAFT_TRAILING_LOGS"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := ParseConfig(func(k string) string { return tt.env[k] })
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("unexpected error: %v", err)
				}
				if len(tt.env) == 0 && c != nil {
					t.Fatal("cluster mode without settings")
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("error %v, want one naming %s", err, tt.wantErr)
			}
		})
	}
	c, _ := ParseConfig(func(k string) string { return with("RAFT_ADDR", ":7001")[k] })
	if c.RaftAdvertise != "127.0.0.1:7001" {
		t.Fatalf("advertise %q, want the address from CLUSTER_PEERS", c.RaftAdvertise)
	}
}

// TestRaftHandshake: the right secret connects both ways; a wrong secret or a peer
// that speaks raft straight away gets a closed connection and Accept never returns it.
func TestRaftHandshake(t *testing.T) {
	secret := []byte(strings.Repeat("k", 32))
	l, rejected, accepted := listenAuth(t, secret, nil)
	addr := raft.ServerAddress(l.Addr().String())

	// Wrong secret: the dialer refuses the listener's proof, the listener the dialer's.
	bad := &authLayer{secret: []byte(strings.Repeat("x", 32))}
	if _, err := bad.Dial(addr, time.Second); err == nil {
		t.Fatal("dial with the wrong secret succeeded")
	}
	<-rejected

	// Raw raft bytes without a handshake: closed without being handed to raft.
	c, err := net.Dial("tcp", string(addr))
	if err != nil {
		t.Fatal(err)
	}
	_, _ = c.Write(bytes.Repeat([]byte{0x01}, 64)) // rpcAppendEntries + garbage
	_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
	if n, err := c.Read(make([]byte, 128)); err == nil && n > 0 {
		// The listener answers the "magic" check only by closing.
		t.Fatalf("listener answered %d bytes to a connection without the handshake", n)
	}
	c.Close()
	<-rejected

	// A replayed dialer proof from another connection is useless: nonces are fresh.
	good := &authLayer{secret: secret}
	gc, err := good.Dial(addr, time.Second)
	if err != nil {
		t.Fatalf("dial with the right secret: %v", err)
	}
	defer gc.Close()
	select {
	case sc := <-accepted:
		// The connection carries data both ways after the handshake.
		go func() { _, _ = gc.Write([]byte("ping")) }()
		buf := make([]byte, 4)
		if _, err := io.ReadFull(sc, buf); err != nil || string(buf) != "ping" {
			t.Fatalf("after handshake: %q %v", buf, err)
		}
		sc.Close()
	case <-time.After(5 * time.Second):
		t.Fatal("authenticated connection not accepted")
	}
	select {
	case <-accepted:
		t.Fatal("an unauthenticated connection reached Accept")
	default:
	}
}

func TestRaftLogOnJournal(t *testing.T) {
	dir := t.TempDir()
	l, err := openRaftLog(dir, Options{Observer: persist.NewCore(nil).Observer()})
	if err != nil {
		t.Fatal(err)
	}
	var logs []*raft.Log
	for i := uint64(1); i <= 100; i++ {
		logs = append(logs, &raft.Log{Index: i, Term: 1 + i/50, Type: raft.LogCommand, Data: []byte(fmt.Sprintf("cmd %d", i)),
			Extensions: []byte{byte(i)}, AppendedAt: time.Unix(0, int64(i))})
	}
	if err := l.StoreLogs(logs[:60]); err != nil {
		t.Fatal(err)
	}
	if err := l.StoreLogs(logs[60:]); err != nil {
		t.Fatal(err)
	}
	check := func(l *journalLog, first, last uint64) {
		t.Helper()
		if f, _ := l.FirstIndex(); f != first {
			t.Fatalf("first %d, want %d", f, first)
		}
		if la, _ := l.LastIndex(); la != last {
			t.Fatalf("last %d, want %d", la, last)
		}
		for i := first; i <= last && i > 0; i++ {
			var got raft.Log
			if err := l.GetLog(i, &got); err != nil {
				t.Fatalf("get %d: %v", i, err)
			}
			w := logs[i-1]
			if got.Index != i || got.Term != w.Term || got.Type != w.Type || string(got.Data) != string(w.Data) ||
				!bytes.Equal(got.Extensions, w.Extensions) || !got.AppendedAt.Equal(w.AppendedAt) {
				t.Fatalf("record %d: got %+v want %+v", i, got, *w)
			}
		}
		var x raft.Log
		if err := l.GetLog(last+1, &x); err != raft.ErrLogNotFound {
			t.Fatalf("get past the end: %v", err)
		}
	}
	check(l, 1, 100)
	// Compaction (prefix) and a conflict (suffix), then new entries on the suffix.
	if err := l.DeleteRange(1, 30); err != nil {
		t.Fatal(err)
	}
	if err := l.DeleteRange(91, 100); err != nil {
		t.Fatal(err)
	}
	check(l, 31, 90)
	if err := l.StoreLogs(logs[90:95]); err != nil {
		t.Fatal(err)
	}
	l.Close()
	l2, err := openRaftLog(dir, Options{Observer: persist.NewCore(nil).Observer()})
	if err != nil {
		t.Fatal(err)
	}
	defer l2.Close()
	check(l2, 31, 95)
	// After a snapshot install raft empties a monotonic log, then continues after a gap.
	if err := l2.DeleteRange(31, 95); err != nil {
		t.Fatal(err)
	}
	check(l2, 0, 0)
	more := &raft.Log{Index: 500, Term: 9, Type: raft.LogCommand, Data: []byte("after snapshot")}
	logs = append(logs, make([]*raft.Log, 400)...)
	logs[499] = more
	if err := l2.StoreLog(more); err != nil {
		t.Fatal(err)
	}
	check(l2, 500, 500)
}

func newTestFSM() *fsm {
	return newFSM(persist.NewCore(nil), zerolog.Nop())
}

func entryLog(t *testing.T, index uint64, reqID string, cmd engine.Command, at int64) *raft.Log {
	t.Helper()
	b, err := json.Marshal(clusterEntry{ReqID: reqID, Env: &engine.Envelope{Time: at, Seed: index * 7, Actor: engine.Admin, Cmd: cmd}})
	if err != nil {
		t.Fatal(err)
	}
	return &raft.Log{Index: index, Term: 1, Type: raft.LogCommand, Data: b}
}

// TestFSMDeterministicAndIdempotent: two FSMs fed the same log have the same digest; a
// retried request id is applied once; a snapshot restored elsewhere has the same digest
// and keeps the request ids.
func TestFSMDeterministicAndIdempotent(t *testing.T) {
	a, b := newTestFSM(), newTestFSM()
	var log []*raft.Log
	for i := 1; i <= 20; i++ {
		cmd := &engine.CreateJudges{
			Judges: []engine.NewJudge{{Name: fmt.Sprintf("Judge %d", i), Email: fmt.Sprintf("j%d@example.com", i)}},
			Codes:  []string{fmt.Sprintf("%08d", 10000000+i)},
		}
		log = append(log, entryLog(t, uint64(i), fmt.Sprintf("req-%d", i), cmd, int64(1000+i)))
	}
	// Request 5 retried after a lost answer, with an earlier time than the last entry.
	log = append(log, entryLog(t, 21, "req-5", &engine.CreateJudges{
		Judges: []engine.NewJudge{{Name: "Judge 5", Email: "j5@example.com"}}, Codes: []string{"10000005"}}, 10))
	w := a.addWaiter("req-3")
	for _, l := range log {
		a.Apply(l)
		b.Apply(l)
	}
	select {
	case r := <-w:
		if r.err != nil || len(r.res.([]engine.CreatedJudge)) != 1 {
			t.Fatalf("waiter got %+v", r)
		}
	default:
		t.Fatal("the waiting request got no result")
	}
	judges := 0
	a.core.Read(func(s *engine.State) { judges = len(s.Judges) })
	if judges != 20 {
		t.Fatalf("%d judges, want 20 (the retried request applied twice?)", judges)
	}
	da, _ := a.digest()
	db, _ := b.digest()
	if da != db || da.Index != 21 {
		t.Fatalf("digests differ: %+v %+v", da, db)
	}
	snap, err := a.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	sink := &memSink{}
	if err := snap.Persist(sink); err != nil {
		t.Fatal(err)
	}
	c := newTestFSM()
	if err := c.Restore(io.NopCloser(bytes.NewReader(sink.Bytes()))); err != nil {
		t.Fatal(err)
	}
	dc, _ := c.digest()
	if dc != da {
		t.Fatalf("restored digest %+v, want %+v", dc, da)
	}
	if _, ok := c.seenIndex("req-7"); !ok {
		t.Fatal("request ids lost in the snapshot")
	}
	// The restored FSM skips a retry the same way.
	c.Apply(entryLog(t, 22, "req-7", &engine.CreateJudges{
		Judges: []engine.NewJudge{{Name: "Judge 7", Email: "j7@example.com"}}, Codes: []string{"10000007"}}, 2000))
	c.core.Read(func(s *engine.State) { judges = len(s.Judges) })
	if judges != 20 {
		t.Fatalf("restored FSM applied a retried request: %d judges", judges)
	}
}

type memSink struct{ bytes.Buffer }

func (s *memSink) ID() string    { return "mem" }
func (s *memSink) Cancel() error { return nil }
func (s *memSink) Close() error  { return nil }

// listenAuth opens an authenticated raft listener on loopback (closed at the end of the
// test) and hands every accepted connection to accepted; rejected gets a value per
// refused handshake.
func listenAuth(t *testing.T, secret []byte, tlsCfg *tls.Config) (*authLayer, chan struct{}, chan net.Conn) {
	t.Helper()
	l, err := newAuthLayer("127.0.0.1:0", "", secret, tlsCfg, zerolog.Nop())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	rejected := make(chan struct{}, 8)
	l.onReject = func() { rejected <- struct{}{} }
	accepted := make(chan net.Conn, 8)
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			accepted <- c
		}
	}()
	return l, rejected, accepted
}

// A raft entry decodes (envelope by the journal's hand decoder) to what
// json.Unmarshal gives, or fails as it does.
func TestClusterEntryDecodeMatchesUnmarshal(t *testing.T) {
	j := engine.ID{1, 2, 3}
	env := &engine.Envelope{Time: 1_700_000_000_000, Seed: 42, Actor: engine.JudgeActor(j), Cmd: &engine.JudgeFinish{Judge: j, Notes: "ok \"quoted\" é"}}
	envJSON, err := json.Marshal(env)
	if err != nil {
		t.Fatal(err)
	}
	member, _ := json.Marshal(clusterEntry{Member: &clusterMember{ID: "b", HTTPURL: "http://b"}})
	full, _ := json.Marshal(clusterEntry{ReqID: "r1", Env: env})
	for _, b := range []string{string(full), string(member), `{}`, `{"e":null}`, `{"r":"x","e":` + string(envJSON) + `,"z":1}`,
		`{"e":{"k":"no.such.kind","t":1,"s":2,"a":{},"d":{}}}`, `{"e":`, `{"e":[1]}`, `null`, `{"r":5}`} {
		var fast, slow clusterEntry
		errFast, errSlow := fast.decode([]byte(b)), json.Unmarshal([]byte(b), &slow)
		if (errFast == nil) != (errSlow == nil) {
			t.Fatalf("%s: decode %v, json.Unmarshal %v", b, errFast, errSlow)
		}
		if errFast == nil && !reflect.DeepEqual(fast, slow) {
			t.Fatalf("%s: decode %+v, json.Unmarshal %+v", b, fast, slow)
		}
	}
}
