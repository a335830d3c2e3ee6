package transport

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"podium/persist"
)

// testPassword is the admin password of every test server.
const testPassword = "test-admin-password"

// testServer is a real Podium server on 127.0.0.1 with a real Badger directory.
type testServer struct {
	t    testing.TB
	URL  string
	Dir  string
	Node *persist.Node
	Srv  *Server
	ln   net.Listener
	ws   *wsCount // websocket connections registered with the hub
	// fault, when it holds a function, fails every journal write with its error (a full
	// or failing disk; failJournal).
	fault *atomic.Pointer[func() error]
}

// startServer starts a server on a fresh t.TempDir(); it stops at the end of the test.
func startServer(t testing.TB, mods ...func(*Config)) *testServer {
	t.Helper()
	return startServerIn(t, t.TempDir(), mods...)
}

// startServerIn starts a server on dir (to test restarts on the same directory).
func startServerIn(t testing.TB, dir string, mods ...func(*Config)) *testServer {
	t.Helper()
	log := zerolog.Nop()
	fault := &atomic.Pointer[func() error]{}
	node, err := persist.Open(dir, persist.Options{Log: log, JournalFault: func() error {
		if fn := fault.Load(); fn != nil {
			return (*fn)()
		}
		return nil
	}})
	if err != nil {
		t.Fatalf("open node: %v", err)
	}
	cfg := Config{DataDir: dir, AdminPassword: testPassword}
	for _, m := range mods {
		m(&cfg)
	}
	count := &wsCount{}
	srv := New(cfg, node, log, countWS(count))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = srv.Listen(ln) }()
	ts := &testServer{t: t, URL: "http://" + ln.Addr().String(), Dir: dir, Node: node, Srv: srv, ln: ln, ws: count, fault: fault}
	t.Cleanup(ts.Stop)
	return ts
}

// failJournal makes every later journal write fail with err, as a full disk would.
func (ts *testServer) failJournal(err error) {
	fn := func() error { return err }
	ts.fault.Store(&fn)
}

// Stop shuts the server down and closes the store (safe to call twice).
func (ts *testServer) Stop() {
	if ts.Srv == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = ts.Srv.Shutdown(ctx)
	_ = ts.Node.Close()
	ts.Srv = nil
}

// auth says how a test request authenticates.
type auth struct {
	admin bool   // Basic admin credentials
	token string // judge bearer token
	hdr   map[string]string
}

var asAdmin = auth{admin: true}

func asJudge(token string) auth { return auth{token: token} }

var anon = auth{}

// do sends a request; body may be nil, a string/[]byte (sent as is) or a value encoded
// as JSON. It returns the status and the body.
func (ts *testServer) do(method, path string, body any, a auth) (int, []byte) {
	ts.t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = bytes.NewBufferString(b)
	case []byte:
		rd = bytes.NewBuffer(b)
	default:
		enc, err := json.Marshal(b)
		if err != nil {
			ts.t.Fatal(err)
		}
		rd = bytes.NewBuffer(enc)
	}
	req, err := http.NewRequest(method, ts.URL+path, rd)
	if err != nil {
		ts.t.Fatal(err)
	}
	if rd != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if a.admin {
		req.Header.Set("Authorization", "Basic "+base64.StdEncoding.EncodeToString([]byte("admin:"+testPassword)))
	}
	if a.token != "" {
		req.Header.Set("Authorization", "Bearer "+a.token)
	}
	for k, v := range a.hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		ts.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, out
}

// must sends a request and fails the test unless the status is want; it decodes the
// JSON answer into out when out is not nil.
func (ts *testServer) must(want int, method, path string, body any, a auth, out any) []byte {
	ts.t.Helper()
	code, b := ts.do(method, path, body, a)
	if code != want {
		ts.t.Fatalf("%s %s: status %d, want %d; body %s", method, path, code, want, b)
	}
	if out != nil {
		if err := json.Unmarshal(b, out); err != nil {
			ts.t.Fatalf("%s %s: decode %s: %v", method, path, b, err)
		}
	}
	return b
}

// addJudge creates a judge through the API and returns its id and login code.
func (ts *testServer) addJudge(name, email, track string) (id, code string) {
	ts.t.Helper()
	var res struct{ ID string }
	ts.must(200, "POST", "/api/judge/new", map[string]any{"name": name, "email": email, "notes": "", "track": track, "no_send": true}, asAdmin, &res)
	var list []struct{ ID, Code string }
	ts.must(200, "GET", "/api/judge/list", nil, asAdmin, &list)
	for _, j := range list {
		if j.ID == res.ID {
			return j.ID, j.Code
		}
	}
	ts.t.Fatalf("judge %s not in list", res.ID)
	return "", ""
}

// login logs a judge in by code and returns its token.
func (ts *testServer) login(code string) string {
	ts.t.Helper()
	var res struct{ Token string }
	ts.must(200, "POST", "/api/judge/login", map[string]string{"code": code}, anon, &res)
	return res.Token
}

// addProject creates a project and returns its id.
func (ts *testServer) addProject(name, challenges string) string {
	ts.t.Helper()
	var res struct{ ID string }
	ts.must(200, "POST", "/api/project/new", map[string]any{"name": name, "description": "d", "challenge_list": challenges}, asAdmin, &res)
	return res.ID
}

// startServerOpts is startServer with server options (observers, limits) and a config
// change (nil: none).
func startServerOpts(t *testing.T, mod func(*Config), opts ...Option) *testServer {
	t.Helper()
	var mods []func(*Config)
	if mod != nil {
		mods = append(mods, mod)
	}
	return startServerWith(t, nil, opts, mods...)
}
