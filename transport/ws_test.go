package transport

import (
	"bufio"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	fastws "github.com/fasthttp/websocket"
	"github.com/rs/zerolog"

	"podium/engine"
	"podium/persist"
	"podium/transport/ws"
)

// startServerWith is startServer with server options and a writer-loop observer.
func startServerWith(t *testing.T, obs persist.Observer, opts []Option, mods ...func(*Config)) *testServer {
	t.Helper()
	dir := t.TempDir()
	log := zerolog.Nop()
	node, err := persist.Open(dir, persist.Options{Log: log, Observer: obs})
	if err != nil {
		t.Fatalf("open node: %v", err)
	}
	cfg := Config{DataDir: dir, AdminPassword: testPassword}
	for _, m := range mods {
		m(&cfg)
	}
	count := &wsCount{}
	srv := New(cfg, node, log, append(opts, countWS(count))...)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = srv.Listen(ln) }()
	ts := &testServer{t: t, URL: "http://" + ln.Addr().String(), Dir: dir, Node: node, Srv: srv, ln: ln, ws: count}
	t.Cleanup(ts.Stop)
	return ts
}

// wsMessage is a server message as a client sees it.
type wsMessage struct {
	Type string          `json:"type"`
	Seq  uint64          `json:"seq"`
	Data json.RawMessage `json:"data"`
}

// wsConn is a real websocket client.
type wsConn struct {
	t       testing.TB
	c       *fastws.Conn
	lastSeq uint64
}

// dialWS opens a websocket to the server with the given request headers.
func (ts *testServer) dialWS(hdr http.Header) (*wsConn, *http.Response, error) {
	return dialWSWith(ts.t, &fastws.Dialer{HandshakeTimeout: 5 * time.Second}, ts.URL, hdr)
}

func dialWSWith(t testing.TB, d *fastws.Dialer, base string, hdr http.Header) (*wsConn, *http.Response, error) {
	u := "ws" + strings.TrimPrefix(base, "http") + "/api/ws"
	c, resp, err := d.Dial(u, hdr)
	if err != nil {
		return nil, resp, err
	}
	w := &wsConn{t: t, c: c}
	t.Cleanup(func() { _ = c.Close() })
	return w, resp, nil
}

// mustDialWS dials and reads the hello message.
func (ts *testServer) mustDialWS(hdr http.Header) (*wsConn, wsMessage) {
	ts.t.Helper()
	w, resp, err := ts.dialWS(hdr)
	if err != nil {
		status := 0
		if resp != nil {
			status = resp.StatusCode
		}
		ts.t.Fatalf("dial websocket: %v (status %d)", err, status)
	}
	return w, w.expect("hello")
}

// read returns the next message; seq must be one more than the previous one.
func (w *wsConn) read(timeout time.Duration) (wsMessage, error) {
	_ = w.c.SetReadDeadline(time.Now().Add(timeout))
	_, b, err := w.c.ReadMessage()
	if err != nil {
		return wsMessage{}, err
	}
	var m wsMessage
	if err := json.Unmarshal(b, &m); err != nil {
		return m, fmt.Errorf("bad server message %s: %w", b, err)
	}
	if m.Seq != w.lastSeq+1 {
		return m, fmt.Errorf("message %s: seq %d after %d", b, m.Seq, w.lastSeq)
	}
	w.lastSeq = m.Seq
	return m, nil
}

// expect reads messages until one of type typ arrives.
func (w *wsConn) expect(typ string) wsMessage {
	w.t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		m, err := w.read(time.Until(deadline))
		if err != nil {
			w.t.Fatalf("waiting for %q: %v", typ, err)
		}
		if m.Type == typ {
			return m
		}
	}
}

// expectNext reads the next message and checks its type.
func (w *wsConn) expectNext(typ string) wsMessage {
	w.t.Helper()
	m, err := w.read(5 * time.Second)
	if err != nil {
		w.t.Fatalf("waiting for %q: %v", typ, err)
	}
	if m.Type != typ {
		w.t.Fatalf("got %q %s, want %q", m.Type, m.Data, typ)
	}
	return m
}

// expectClose reads until the connection ends and returns the close code (-1 when the
// socket ended without a close frame).
func (w *wsConn) expectClose() int {
	w.t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		_ = w.c.SetReadDeadline(deadline)
		_, _, err := w.c.ReadMessage()
		if err == nil {
			continue
		}
		var ce *fastws.CloseError
		if errors.As(err, &ce) {
			return ce.Code
		}
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			w.t.Fatalf("connection still open")
		}
		return -1
	}
}

func (w *wsConn) send(v any) {
	w.t.Helper()
	if err := w.c.WriteJSON(v); err != nil {
		w.t.Fatalf("send: %v", err)
	}
}

func decode[T any](t testing.TB, raw json.RawMessage) T {
	t.Helper()
	var v T
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatalf("decode %s: %v", raw, err)
	}
	return v
}

func cookieHeader(name, value string) http.Header {
	return http.Header{"Cookie": {name + "=" + value}}
}

// adminCookie logs the admin in and returns the session cookie value.
func (ts *testServer) adminCookie() string {
	ts.t.Helper()
	req, _ := http.NewRequest("POST", ts.URL+"/api/admin/login", strings.NewReader(`{"password":"`+testPassword+`"}`))
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		ts.t.Fatal(err)
	}
	defer resp.Body.Close()
	for _, c := range resp.Cookies() {
		if c.Name == cookieAdmin {
			return c.Value
		}
	}
	ts.t.Fatalf("no admin cookie (status %d)", resp.StatusCode)
	return ""
}

// The hub's default gap between two stats messages and its inbound message limit
// (package ws).
const (
	defaultStatsEvery = 500 * time.Millisecond
	wsMaxInbound      = 4 << 10
)

// hub is the server's websocket hub.
func (ts *testServer) hub() *ws.Hub { return ts.Srv.ext.realtime.hub }

// wsCount is a hub observer that keeps the number of registered connections (the sum of
// WSConnections deltas) and passes every measurement on to the observer set before it.
type wsCount struct {
	inner ws.Observer
	n     atomic.Int64
}

// countWS installs c as the hub observer; it must be the last option.
func countWS(c *wsCount) Option {
	return func(s *Server) { c.inner, s.ext.realtime.obs = s.ext.realtime.obs, c }
}

func (c *wsCount) WSConnections(role string, delta int) {
	c.n.Add(int64(delta))
	if c.inner != nil {
		c.inner.WSConnections(role, delta)
	}
}

func (c *wsCount) WSSent(typ string, n int) {
	if c.inner != nil {
		c.inner.WSSent(typ, n)
	}
}

func (c *wsCount) WSDropped(reason string) {
	if c.inner != nil {
		c.inner.WSDropped(reason)
	}
}

func (c *wsCount) WSBroadcast(d time.Duration) {
	if c.inner != nil {
		c.inner.WSBroadcast(d)
	}
}

func (c *wsCount) WSEventsLost(n int) {
	if c.inner != nil {
		c.inner.WSEventsLost(n)
	}
}

// wsConns is the number of websocket connections registered with the hub.
func (ts *testServer) wsConns() int64 { return ts.ws.n.Load() }

// waitFor polls cond for up to 5 s.
func waitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

type helloMsg struct {
	Role         string            `json:"role"`
	Clock        engine.ClockEvent `json:"clock"`
	Deliberation *struct {
		On bool `json:"on"`
	} `json:"deliberation"`
	GroupInfo *engine.GroupInfo `json:"group_info"`
	Current   json.RawMessage   `json:"current"`
	Group     *int              `json:"group"`
}

func TestWSHello(t *testing.T) {
	ts := startServer(t)
	judgeID, code := ts.addJudge("Ada", "ada@example.com", "")
	token := ts.login(code)
	ts.must(200, "POST", "/api/admin/clock/unpause", nil, asAdmin, nil)

	// Anonymous: clock, deliberation, group info, no judge fields.
	_, m := ts.mustDialWS(nil)
	h := decode[helloMsg](t, m.Data)
	if m.Seq != 1 || h.Role != "anonymous" || !h.Clock.Running || h.Clock.StartTime == 0 ||
		h.Deliberation == nil || h.Deliberation.On || h.GroupInfo == nil ||
		len(h.GroupInfo.Names) != 3 || h.GroupInfo.Enabled || h.Current != nil || h.Group != nil {
		t.Fatalf("anonymous hello %s", m.Data)
	}

	// Judge by cookie (podium_judge, or the pre-rename token): current (null) and group.
	if cookieJudge != "podium_judge" {
		t.Fatalf("judge cookie is %q, want podium_judge (docs/behaviour.md#realtime)", cookieJudge)
	}
	for _, name := range []string{cookieJudge, cookieJudgeOld} {
		_, m = ts.mustDialWS(cookieHeader(name, token))
		h = decode[helloMsg](t, m.Data)
		if h.Role != "judge" || string(h.Current) != "null" || h.Group == nil || *h.Group != 0 {
			t.Fatalf("judge hello by %s cookie %s", name, m.Data)
		}
	}

	// Judge by auth message: a second hello after the first.
	w, m := ts.mustDialWS(nil)
	w.send(map[string]string{"type": "auth", "token": token})
	m = w.expect("hello")
	h = decode[helloMsg](t, m.Data)
	if h.Role != "judge" || string(h.Current) != "null" || m.Seq < 2 {
		t.Fatalf("judge hello after auth %s (seq %d)", m.Data, m.Seq)
	}
	// The judge's own events reach it.
	jid, _ := engine.ParseID(judgeID)
	ts.hub().Publish([]engine.Event{{Type: engine.EvJudge, To: engine.ToJudge, Judge: jid, Data: engine.JudgeEvent{Group: 2, Reason: "swap"}}})
	if ev := decode[engine.JudgeEvent](t, w.expect("judge").Data); ev.Group != 2 || ev.Reason != "swap" {
		t.Fatalf("judge event %+v", ev)
	}

	// Admin by cookie: hello, then the current stats.
	w, m = ts.mustDialWS(cookieHeader(cookieAdmin, ts.adminCookie()))
	if h = decode[helloMsg](t, m.Data); h.Role != "admin" {
		t.Fatalf("admin hello %s", m.Data)
	}
	st := decode[map[string]int](t, w.expect("stats").Data)
	for _, k := range []string{"projects", "avg_project_seen", "avg_judge_seen", "judges"} {
		if _, ok := st[k]; !ok {
			t.Fatalf("stats without %s", k)
		}
	}

	// Admin by auth message.
	w, _ = ts.mustDialWS(nil)
	w.send(map[string]string{"type": "auth", "password": testPassword})
	if h = decode[helloMsg](t, w.expect("hello").Data); h.Role != "admin" {
		t.Fatalf("admin hello after auth %+v", h)
	}

	// Wrong credentials close the connection (1008); unknown messages are ignored.
	w, _ = ts.mustDialWS(nil)
	w.send(map[string]string{"type": "ping"})
	w.send(map[string]string{"type": "auth", "token": "not-a-token"})
	if code := w.expectClose(); code != fastws.ClosePolicyViolation {
		t.Fatalf("bad token: close %d", code)
	}
	w, _ = ts.mustDialWS(nil)
	w.send(map[string]string{"type": "auth", "password": "wrong"})
	if code := w.expectClose(); code != fastws.ClosePolicyViolation {
		t.Fatalf("bad password: close %d", code)
	}
	// A stale cookie is simply anonymous.
	_, m = ts.mustDialWS(cookieHeader(cookieAdmin, "stale"))
	if h = decode[helloMsg](t, m.Data); h.Role != "anonymous" {
		t.Fatalf("stale cookie hello %s", m.Data)
	}
}

func TestWSClockPauseReachesEveryRole(t *testing.T) {
	ts := startServer(t)
	_, code := ts.addJudge("Ada", "ada@example.com", "")
	token := ts.login(code)
	ts.must(200, "POST", "/api/admin/clock/unpause", nil, asAdmin, nil)

	anonWS, _ := ts.mustDialWS(nil)
	judgeWS, _ := ts.mustDialWS(http.Header{"Authorization": {"Bearer " + token}})
	adminWS, _ := ts.mustDialWS(cookieHeader(cookieAdmin, ts.adminCookie()))
	adminWS.expectNext("stats")

	var res struct{ Clock engine.Clock }
	ts.must(200, "POST", "/api/admin/clock/pause", nil, asAdmin, &res)
	// The unpause's own events may still arrive after hello (hello already showed its
	// effect): skip to the paused clock.
	pausedClock := func(name string, w *wsConn) {
		t.Helper()
		for {
			m := w.expect("clock")
			ev := decode[engine.ClockEvent](t, m.Data)
			if ev.Running {
				continue
			}
			if ev.PauseTime != res.Clock.PauseTime || ev.StartTime != res.Clock.StartTime ||
				ev.Time != res.Clock.PauseTime-res.Clock.StartTime {
				t.Fatalf("%s: clock %+v, want %+v", name, ev, res.Clock)
			}
			return
		}
	}
	pausedClock("anonymous", anonWS)
	pausedClock("judge", judgeWS)
	// Admins get the audit line too (the command logs before it emits the clock).
	for {
		lg := decode[engine.LogEvent](t, adminWS.expect("log").Data)
		if len(lg.Lines) == 1 && strings.Contains(lg.Lines[0], "clock paused") {
			break
		}
	}
	pausedClock("admin", adminWS)
	pid := ts.addProject("Rocket", "AI")
	ch := decode[engine.ChangedEvent](t, adminWS.expect("changed").Data)
	for ch.Kind != "project" { // options (clock) or judges (creation) changed before
		ch = decode[engine.ChangedEvent](t, adminWS.expect("changed").Data)
	}
	if ch.Kind != "project" || len(ch.IDs) != 1 || ch.IDs[0].String() != pid {
		t.Fatalf("changed %+v", ch)
	}
	ex := decode[engine.ExpoEvent](t, anonWS.expectNext("expo").Data)
	if ex.Action != "upsert" || ex.Project.Name != "Rocket" {
		t.Fatalf("expo %+v", ex)
	}
	// Admin-only events never reach the others: their next message is the next
	// broadcast.
	ts.must(200, "POST", "/api/admin/clock/unpause", nil, asAdmin, nil)
	anonWS.expectNext("clock")
	judgeWS.expectNext("expo")
	judgeWS.expectNext("clock")
}

// TestWSAdminChangesReachClients drives real admin routes: moving a judge to another
// group tells that judge only; deliberation and group settings reach everyone.
func TestWSAdminChangesReachClients(t *testing.T) {
	ts := startServer(t)
	idA, codeA := ts.addJudge("Ada", "ada@example.com", "")
	_, codeB := ts.addJudge("Bob", "bob@example.com", "")
	a, _ := ts.mustDialWS(cookieHeader(cookieJudge, ts.login(codeA)))
	b, _ := ts.mustDialWS(cookieHeader(cookieJudge, ts.login(codeB)))
	anonWS, _ := ts.mustDialWS(nil)

	ts.must(200, "PUT", "/api/judge/move/group/"+idA, map[string]int{"group": 2}, asAdmin, nil)
	ev := decode[engine.JudgeEvent](t, a.expect("judge").Data)
	if ev.Group != 2 || ev.Current != nil || ev.Reason == "" {
		t.Fatalf("judge event %+v", ev)
	}
	ts.must(200, "POST", "/api/admin/deliberation", map[string]bool{"start": true}, asAdmin, nil)
	// B never gets A's judge message.
	for {
		m, err := b.read(5 * time.Second)
		if err != nil {
			t.Fatal(err)
		}
		if m.Type == "judge" {
			t.Fatalf("judge B got judge A's message %s", m.Data)
		}
		if m.Type == "deliberation" {
			break
		}
	}
	for name, w := range map[string]*wsConn{"judge A": a, "anonymous": anonWS} {
		m := w.expect("deliberation")
		if d := decode[engine.DeliberationEvent](t, m.Data); !d.On {
			t.Fatalf("%s: deliberation %s", name, m.Data)
		}
	}
	ts.must(200, "POST", "/api/admin/options", map[string]any{"multi_group": true}, asAdmin, nil)
	for name, w := range map[string]*wsConn{"judge A": a, "judge B": b, "anonymous": anonWS} {
		if gi := decode[engine.GroupInfo](t, w.expect("group_info").Data); !gi.Enabled || len(gi.Names) != 3 {
			t.Fatalf("%s: group info %+v", name, gi)
		}
	}
	// A new connection's hello shows the new state.
	_, m := ts.mustDialWS(nil)
	if h := decode[helloMsg](t, m.Data); !h.Deliberation.On || !h.GroupInfo.Enabled {
		t.Fatalf("hello after changes %s", m.Data)
	}
	_, m = ts.mustDialWS(cookieHeader(cookieJudge, ts.login(codeA)))
	if h := decode[helloMsg](t, m.Data); h.Group == nil || *h.Group != 2 {
		t.Fatalf("judge hello after move %s", m.Data)
	}
}

// TestWSFlagAndJudgeRouting applies events through the hub's sink directly: the routes
// that emit flags and judge events (skip, hide) belong to the judging and admin issues.
func TestWSFlagAndJudgeRouting(t *testing.T) {
	ts := startServer(t)
	idA, codeA := ts.addJudge("Ada", "ada@example.com", "")
	_, codeB := ts.addJudge("Bob", "bob@example.com", "")
	a, _ := ts.mustDialWS(cookieHeader(cookieJudge, ts.login(codeA)))
	b, _ := ts.mustDialWS(cookieHeader(cookieJudge, ts.login(codeB)))
	anonWS, _ := ts.mustDialWS(nil)
	adminWS, _ := ts.mustDialWS(nil)
	adminWS.send(map[string]string{"type": "auth", "password": testPassword})
	adminWS.expectNext("hello")

	ja, _ := engine.ParseID(idA)
	flag := engine.Flag{JudgeID: ja, ProjectName: "Rocket", Reason: "absent", JudgeName: "Ada"}
	cur := engine.ID{1}
	ts.hub().Publish([]engine.Event{
		{Type: engine.EvFlag, To: engine.ToAdmins, Data: flag},
		{Type: engine.EvJudge, To: engine.ToJudge, Judge: ja, Data: engine.JudgeEvent{Current: &cur, Group: 1, Reason: "hidden"}},
		{Type: engine.EvDeliberation, To: engine.ToEveryone, Data: engine.DeliberationEvent{On: true}},
	})
	if f := decode[engine.Flag](t, adminWS.expect("flag").Data); f.Reason != "absent" || f.ProjectName != "Rocket" {
		t.Fatalf("flag %+v", f)
	}
	adminWS.expectNext("deliberation")
	if ev := decode[engine.JudgeEvent](t, a.expectNext("judge").Data); ev.Current == nil || *ev.Current != cur || ev.Reason != "hidden" {
		t.Fatalf("judge event %+v", ev)
	}
	a.expectNext("deliberation")
	b.expectNext("deliberation")
	anonWS.expectNext("deliberation")
}

// TestWSStatsCoalesced checks that admins get stats at most twice per second however
// fast the state changes, and that the last stats they got are the current ones.
func TestWSStatsCoalesced(t *testing.T) {
	ts := startServer(t)
	adminWS, _ := ts.mustDialWS(cookieHeader(cookieAdmin, ts.adminCookie()))
	last := decode[engine.AdminStats](t, adminWS.expectNext("stats").Data)
	start := time.Now()
	for i := 0; i < 30; i++ {
		ts.addProject(fmt.Sprintf("P%d", i), "")
		ts.addJudge(fmt.Sprintf("J%d", i), fmt.Sprintf("j%d@example.com", i), "")
	}
	time.Sleep(2 * defaultStatsEvery) // let the last coalesced stats go out
	elapsed := time.Since(start)
	stats := 0
	for {
		m, err := adminWS.read(200 * time.Millisecond)
		if err != nil {
			break
		}
		if m.Type == "stats" {
			stats++
			last = decode[engine.AdminStats](t, m.Data)
		}
	}
	if max := int(elapsed/defaultStatsEvery) + 1; stats > max {
		t.Fatalf("%d stats messages in %v (at most %d)", stats, elapsed, max)
	}
	var want engine.AdminStats
	ts.Node.Read(func(s *engine.State) { want = s.AdminStats("") })
	if last != want {
		t.Fatalf("last stats %+v, current %+v", last, want)
	}
	t.Logf("%d stats messages during %v of changes", stats, elapsed)
}

// smallBufferDialer dials with a tiny socket receive buffer, so that a client that
// stops reading backs up into the server quickly.
func smallBufferDialer() *fastws.Dialer {
	nd := &net.Dialer{Control: func(_, _ string, rc syscall.RawConn) error {
		var serr error
		if err := rc.Control(func(fd uintptr) {
			serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 4096)
		}); err != nil {
			return err
		}
		return serr
	}}
	return &fastws.Dialer{NetDial: nd.Dial, HandshakeTimeout: 5 * time.Second}
}

// expoHead matches the start of an expo message as the server encodes it.
var expoHead = regexp.MustCompile(`^\{"type":"expo","seq":(\d+),"data":\{"action":"upsert","project":\{"id":"[0-9a-f]{24}","name":"([^"]+)"`)

func TestWSSlowClientDroppedOthersKeepUp(t *testing.T) {
	ts := startServer(t)
	slow, _, err := dialWSWith(t, smallBufferDialer(), ts.URL, nil)
	if err != nil {
		t.Fatal(err)
	}
	const n = 50
	type got struct {
		names []string
		err   error
	}
	results := make([]chan got, n)
	received := make(chan int, n*64)
	stop := make(chan struct{})
	for i := 0; i < n; i++ {
		w, _ := ts.mustDialWS(nil)
		results[i] = make(chan got, 1)
		go func(i int, w *wsConn) {
			var g got
			for {
				_ = w.c.SetReadDeadline(time.Now().Add(10 * time.Second))
				_, b, err := w.c.ReadMessage()
				if err != nil {
					select {
					case <-stop:
					default:
						g.err = err
					}
					results[i] <- g
					return
				}
				// Only the head is parsed: full decoding of 50 x 20 KB per round
				// is slow under the race detector.
				sm := expoHead.FindSubmatch(b[:min(len(b), 200)])
				seq := uint64(0)
				if sm != nil {
					seq, _ = strconv.ParseUint(string(sm[1]), 10, 64)
				}
				if sm == nil || seq != w.lastSeq+1 {
					g.err = fmt.Errorf("message %.100s after seq %d", b, w.lastSeq)
					results[i] <- g
					return
				}
				w.lastSeq = seq
				g.names = append(g.names, string(sm[2]))
				received <- i
			}
		}(i, w)
	}
	waitFor(t, "51 connections", func() bool { return ts.wsConns() == n+1 })

	// Big expo messages, perRound projects per round created concurrently; each round waits
	// until the 50 readers have its messages, so only the client that does not read
	// falls behind.
	const perRound = 1
	desc := strings.Repeat("x", 20000)
	created := 0
	round := func() {
		t.Helper()
		codes := make(chan int, perRound)
		for k := 0; k < perRound; k++ {
			created++
			go func(name string) {
				code, _ := ts.do("POST", "/api/project/new", map[string]any{"name": name, "description": desc}, asAdmin)
				codes <- code
			}(fmt.Sprintf("P%05d", created))
		}
		for k := 0; k < perRound; k++ {
			if code := <-codes; code != 200 {
				t.Fatalf("create project: %d", code)
			}
		}
		for k := 0; k < n*perRound; k++ {
			select {
			case <-received:
			case <-time.After(10 * time.Second):
				t.Fatalf("after %d projects only %d of %d messages arrived", created, k, n*perRound)
			}
		}
	}
	rounds := 0
	for ts.wsConns() == n+1 {
		if rounds == 300 {
			t.Fatal("the client that stopped reading was never disconnected")
		}
		rounds++
		round()
	}
	// A few more rounds after the drop: the others keep receiving.
	for extra := 0; extra < 3; extra++ {
		round()
	}
	var order []struct{ Name string }
	ts.must(200, "GET", "/api/project/list", nil, asAdmin, &order)
	close(stop)
	ts.Stop()
	for i := 0; i < n; i++ {
		g := <-results[i]
		if g.err != nil {
			t.Fatalf("reader %d: %v", i, g.err)
		}
		if len(g.names) != created || len(order) != created {
			t.Fatalf("reader %d got %d messages, want %d", i, len(g.names), created)
		}
		for k, name := range g.names {
			if name != order[k].Name {
				t.Fatalf("reader %d: message %d is %s, want %s (creation order)", i, k, name, order[k].Name)
			}
		}
	}
	// The slow client finds its connection closed once it reads what was buffered.
	if code := (&wsConn{t: t, c: slow.c}).expectClose(); code == fastws.CloseGoingAway {
		t.Fatalf("slow client was not dropped before shutdown")
	}
	t.Logf("slow client dropped after %d rounds of %d 20 KB messages", rounds, perRound)
}

func TestWSOversizeInboundCloses(t *testing.T) {
	ts := startServer(t)
	w, _ := ts.mustDialWS(nil)
	// 4 KiB exactly is allowed (and ignored).
	msg := `{"type":"noop","pad":"` + strings.Repeat("a", wsMaxInbound-len(`{"type":"noop","pad":""}`)) + `"}`
	if err := w.c.WriteMessage(fastws.TextMessage, []byte(msg)); err != nil {
		t.Fatal(err)
	}
	ts.must(200, "POST", "/api/admin/clock/unpause", nil, asAdmin, nil)
	w.expectNext("clock")
	if err := w.c.WriteMessage(fastws.TextMessage, []byte(msg+" ")); err != nil {
		t.Fatal(err)
	}
	if code := w.expectClose(); code != fastws.CloseMessageTooBig {
		t.Fatalf("close code %d, want %d", code, fastws.CloseMessageTooBig)
	}
	waitFor(t, "unregister", func() bool { return ts.wsConns() == 0 })
}

func TestWSConnectionCap(t *testing.T) {
	ts := startServer(t, func(c *Config) { c.MaxWSConnections = 3 })
	var conns []*wsConn
	for i := 0; i < 3; i++ {
		w, _ := ts.mustDialWS(nil)
		conns = append(conns, w)
	}
	_, resp, err := ts.dialWS(nil)
	if err == nil || resp == nil || resp.StatusCode != 503 {
		t.Fatalf("4th connection: err %v, resp %+v", err, resp)
	}
	_ = conns[0].c.Close()
	waitFor(t, "a free slot", func() bool { return ts.wsConns() == 2 })
	ts.mustDialWS(nil)
}

func TestWSOriginCheck(t *testing.T) {
	ts := startServer(t, func(c *Config) { c.CORSOrigins = []string{"https://dash.example.org"} })
	own := ts.URL
	for _, tc := range []struct {
		origin string
		want   int
	}{
		{"", 101},
		{own, 101},
		{strings.ToUpper(own[:4]) + own[4:], 101},
		{"https://dash.example.org", 101},
		{"https://dash.example.org:443", 101},
		{"https://evil.example.org", 403},
		{"null", 403},
		{strings.Replace(own, "http://", "https://", 1), 403},
	} {
		hdr := http.Header{}
		if tc.origin != "" {
			hdr.Set("Origin", tc.origin)
		}
		_, resp, err := ts.dialWS(hdr)
		status := 0
		if resp != nil {
			status = resp.StatusCode
		}
		if status != tc.want {
			t.Fatalf("origin %q: status %d (err %v), want %d", tc.origin, status, err, tc.want)
		}
	}

	// With PUBLIC_URL, the server's origin is PUBLIC_URL's, not the request's.
	ts2 := startServer(t, func(c *Config) { c.PublicURL = "https://podium.example.org/judging" })
	for origin, want := range map[string]int{"https://podium.example.org": 101, ts2.URL: 403} {
		_, resp, _ := ts2.dialWS(http.Header{"Origin": {origin}})
		if resp == nil || resp.StatusCode != want {
			t.Fatalf("PUBLIC_URL, origin %q: resp %+v, want %d", origin, resp, want)
		}
	}
	// A plain GET is not an upgrade.
	if code, _ := ts.do("GET", "/api/ws", nil, anon); code != 426 {
		t.Fatalf("plain GET /api/ws: %d", code)
	}
}

func TestWSPingAndIdleDrop(t *testing.T) {
	ts := startServerWith(t, nil, []Option{withHubTimings(ws.Timings{
		Ping: 50 * time.Millisecond, ReadTimeout: 250 * time.Millisecond,
		WriteTimeout: time.Second, StatsEvery: 10 * time.Millisecond,
	})})
	live, _ := ts.mustDialWS(nil)
	var pings atomic.Int32
	live.c.SetPingHandler(func(data string) error {
		pings.Add(1)
		return live.c.WriteControl(fastws.PongMessage, []byte(data), time.Now().Add(time.Second))
	})
	msgs := make(chan wsMessage, 10)
	errc := make(chan error, 1)
	go func() { // reading answers the pings
		for {
			m, err := live.read(5 * time.Second)
			if err != nil {
				errc <- err
				return
			}
			msgs <- m
		}
	}()
	idle, _ := ts.mustDialWS(nil) // never reads, so never answers pings
	waitFor(t, "the idle client to be dropped", func() bool { return ts.wsConns() == 1 })
	time.Sleep(600 * time.Millisecond) // more than two read timeouts
	ts.must(200, "POST", "/api/admin/clock/unpause", nil, asAdmin, nil)
	select {
	case m := <-msgs:
		if m.Type != "clock" {
			t.Fatalf("live client got %q", m.Type)
		}
	case err := <-errc:
		t.Fatalf("live client: %v", err)
	}
	if pings.Load() == 0 {
		t.Fatal("no pings received")
	}
	if code := idle.expectClose(); code != fastws.CloseGoingAway {
		t.Fatalf("idle client: close %d", code)
	}
}

func TestWSSessionEndCloses(t *testing.T) {
	ts := startServerWith(t, nil, []Option{withHubTimings(ws.Timings{
		Ping: 30 * time.Millisecond, ReadTimeout: 5 * time.Second,
		WriteTimeout: time.Second, StatsEvery: 10 * time.Millisecond,
	})})
	_, code := ts.addJudge("Ada", "ada@example.com", "")
	token := ts.login(code)
	judgeWS, _ := ts.mustDialWS(cookieHeader(cookieJudge, token))
	cookie := ts.adminCookie()
	adminWS, _ := ts.mustDialWS(cookieHeader(cookieAdmin, cookie))
	pwAdmin, _ := ts.mustDialWS(nil)
	pwAdmin.send(map[string]string{"type": "auth", "password": testPassword})
	pwAdmin.expectNext("hello")
	waitFor(t, "3 connections", func() bool { return ts.wsConns() == 3 })

	ts.must(200, "POST", "/api/judge/logout", nil, asJudge(token), nil)
	if code := judgeWS.expectClose(); code != fastws.ClosePolicyViolation {
		t.Fatalf("judge after logout: close %d", code)
	}
	ts.must(200, "POST", "/api/admin/logout", nil, auth{hdr: map[string]string{"Cookie": cookieAdmin + "=" + cookie}}, nil)
	if code := adminWS.expectClose(); code != fastws.ClosePolicyViolation {
		t.Fatalf("admin after logout: close %d", code)
	}
	// An admin who proved the password has no session to end.
	time.Sleep(100 * time.Millisecond)
	ts.must(200, "POST", "/api/admin/clock/unpause", nil, asAdmin, nil)
	pwAdmin.expect("clock")
}

// Basic credentials on the upgrade are password attempts, throttled like logins.
func TestWSBasicAuthThrottled(t *testing.T) {
	ts := startServer(t)
	basic := func(pw string) http.Header {
		return http.Header{"Authorization": {"Basic " + base64.StdEncoding.EncodeToString([]byte("admin:"+pw))}}
	}
	w, _, err := ts.dialWS(basic(testPassword))
	if err != nil {
		t.Fatal(err)
	}
	if h := decode[helloMsg](t, w.expect("hello").Data); h.Role != "admin" {
		t.Fatalf("basic admin hello %+v", h)
	}
	for i := 0; i < adminFailLimit; i++ {
		if _, resp, _ := ts.dialWS(basic("wrong")); resp == nil || resp.StatusCode != 401 {
			t.Fatalf("wrong password %d: %+v", i, resp)
		}
	}
	if _, resp, _ := ts.dialWS(basic(testPassword)); resp == nil || resp.StatusCode != 429 {
		t.Fatalf("after %d failures: %+v", adminFailLimit, resp)
	}
}

func TestWSShutdownClosesWith1001(t *testing.T) {
	ts := startServer(t)
	w, _ := ts.mustDialWS(nil)
	ts.Stop()
	if code := w.expectClose(); code != fastws.CloseGoingAway {
		t.Fatalf("close code %d, want 1001", code)
	}
}

func TestWSBroadcast2000(t *testing.T) {
	const n = 2000
	ts := startServer(t, func(c *Config) { c.MaxWSPerIP = n })
	conns := make([]*wsConn, n)
	var wg sync.WaitGroup
	errs := make(chan error, n)
	next := make(chan int, n)
	for i := 0; i < n; i++ {
		next <- i
	}
	close(next)
	for k := 0; k < 32; k++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				w, _, err := ts.dialWS(nil)
				if err != nil {
					errs <- err
					return
				}
				if m, err := w.read(10 * time.Second); err != nil || m.Type != "hello" {
					errs <- fmt.Errorf("hello: %v %q", err, m.Type)
					return
				}
				conns[i] = w
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("dial: %v", err)
	}
	recv := make([]time.Time, n)
	got := make(chan error, n)
	for i, w := range conns {
		go func(i int, w *wsConn) {
			m, err := w.read(20 * time.Second)
			if err == nil && m.Type != "clock" {
				err = fmt.Errorf("got %q", m.Type)
			}
			recv[i] = time.Now()
			got <- err
		}(i, w)
	}
	t0 := time.Now()
	ts.must(200, "POST", "/api/admin/clock/unpause", nil, asAdmin, nil)
	for i := 0; i < n; i++ {
		if err := <-got; err != nil {
			t.Fatalf("client: %v", err)
		}
	}
	lat := make([]time.Duration, n)
	for i := range recv {
		lat[i] = recv[i].Sub(t0)
	}
	sort.Slice(lat, func(a, b int) bool { return lat[a] < lat[b] })
	t.Logf("%d clients received the broadcast; delivery latency from the request: p50 %v, p99 %v, max %v; first to last client %v",
		n, lat[n/2], lat[n*99/100], lat[n-1], lat[n-1]-lat[0])
}

// BenchmarkWSIdleMemory measures the server's resident memory per idle websocket
// connection: it builds and starts the real binary, reads its RSS with no connections
// and with 5,000 idle ones, and reports the difference per connection. Run with
// go test ./transport/ -run '^$' -bench WSIdleMemory -benchtime 1x
func BenchmarkWSIdleMemory(b *testing.B) {
	const n = 5000
	dir := b.TempDir()
	bin := filepath.Join(dir, "podium")
	if out, err := exec.Command("go", "build", "-o", bin, "podium/cmd/podium").CombinedOutput(); err != nil {
		b.Fatalf("build: %v\n%s", err, out)
	}
	for i := 0; i < b.N; i++ {
		cmd := exec.Command(bin)
		cmd.Env = append(os.Environ(), "DATA_DIR="+filepath.Join(dir, fmt.Sprint("data", i)), "PORT=0",
			"ADMIN_PASSWORD=bench", "LOG_LEVEL=warn", "METRICS_ADDR=", fmt.Sprintf("MAX_WS_PER_IP=%d", 2*n))
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			b.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			b.Fatal(err)
		}
		sc := bufio.NewScanner(stdout)
		port := ""
		for sc.Scan() {
			if line := sc.Text(); strings.HasPrefix(line, "podium listening on ") {
				port = line[strings.LastIndex(line, ":")+1:]
				break
			}
		}
		go func() { // keep draining stdout
			for sc.Scan() {
			}
		}()
		if port == "" {
			_ = cmd.Process.Kill()
			b.Fatal("server did not start")
		}
		base := "http://127.0.0.1:" + port
		d := &fastws.Dialer{HandshakeTimeout: 10 * time.Second}
		warm, _, err := dialWSWith(b, d, base, nil)
		if err != nil {
			_ = cmd.Process.Kill()
			b.Fatal(err)
		}
		_ = warm.c.Close()
		time.Sleep(time.Second)
		before := rssBytes(b, cmd.Process.Pid)
		conns := make([]*wsConn, 0, n)
		for len(conns) < n {
			w, _, err := dialWSWith(b, d, base, nil)
			if err != nil {
				_ = cmd.Process.Kill()
				b.Fatalf("dial %d: %v", len(conns), err)
			}
			if _, err := w.read(10 * time.Second); err != nil {
				_ = cmd.Process.Kill()
				b.Fatal(err)
			}
			conns = append(conns, w)
		}
		time.Sleep(2 * time.Second)
		after := rssBytes(b, cmd.Process.Pid)
		per := float64(after-before) / n
		b.ReportMetric(per, "B/conn")
		b.Logf("server RSS %d KiB without connections, %d KiB with %d idle connections: %.0f bytes per connection",
			before>>10, after>>10, n, per)
		for _, w := range conns {
			_ = w.c.Close()
		}
		_ = cmd.Process.Signal(syscall.SIGTERM)
		_ = cmd.Wait()
	}
}

// rssBytes reads a process's resident set size from /proc.
func rssBytes(b *testing.B, pid int) int64 {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		b.Fatal(err)
	}
	for _, line := range strings.Split(string(raw), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmRSS:" {
			kb, err := strconv.ParseInt(f[1], 10, 64)
			if err != nil {
				b.Fatal(err)
			}
			return kb << 10
		}
	}
	b.Fatal("no VmRSS")
	return 0
}
