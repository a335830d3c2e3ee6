package ws

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"math/big"
	"net"
	"sync"
	"testing"
	"time"

	fastws "github.com/fasthttp/websocket"
	"github.com/rs/zerolog"
	"github.com/valyala/fasthttp"

	"podium/engine"
)

// testPassword is the password testAuth accepts for the admin role.
const testPassword = "test-admin-password"

// testAuth accepts testPassword for the admin role and refuses everything else.
type testAuth struct{}

func (testAuth) Authenticate(_ string, token, password *string) (Roles, string) {
	if password != nil && *password == testPassword && token == nil {
		return Roles{Admin: true}, ""
	}
	return Roles{}, "authentication failed"
}

// testHub is a hub behind a real fasthttp server on 127.0.0.1 doing the upgrade as
// package transport does, over a fresh engine.
type testHub struct {
	t    testing.TB
	h    *Hub
	addr string // 127.0.0.1:port
	url  string // ws://127.0.0.1:port/
}

// startHub starts a hub with cfg (zero limits: 1000) and its server; both stop at the
// end of the test.
func startHub(t testing.TB, cfg Config) *testHub { t.Helper(); return startHubTLS(t, cfg, nil) }

// startHubTLS is startHub with a server terminating TLS with tlsCfg (nil: plain TCP).
func startHubTLS(t testing.TB, cfg Config, tlsCfg *tls.Config) *testHub {
	t.Helper()
	if cfg.MaxConnections == 0 {
		cfg.MaxConnections = 1000
	}
	if cfg.MaxPerIP == 0 {
		cfg.MaxPerIP = 1000
	}
	h := New(cfg, engine.New(), testAuth{}, nil, zerolog.Nop())
	go h.Run()
	up := &fastws.FastHTTPUpgrader{
		CheckOrigin:     func(*fasthttp.RequestCtx) bool { return true },
		ReadBufferSize:  128,
		WriteBufferPool: &sync.Pool{},
	}
	srv := &fasthttp.Server{KeepHijackedConns: true, Handler: func(ctx *fasthttp.RequestCtx) {
		if err := up.Upgrade(ctx, func(c *fastws.Conn) { h.Accept(c.NetConn(), "127.0.0.1", Roles{}) }); err != nil {
			ctx.SetStatusCode(fasthttp.StatusUpgradeRequired)
		}
	}}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	if tlsCfg != nil {
		ln = tls.NewListener(ln, tlsCfg)
	}
	go func() { _ = srv.Serve(ln) }()
	th := &testHub{t: t, h: h, addr: addr, url: "ws://" + addr + "/"}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = h.Shutdown(ctx)
		_ = srv.ShutdownWithContext(ctx)
	})
	return th
}

// count is the number of registered connections.
func (th *testHub) count() int64 { return th.h.count.Load() }

// publishClock publishes a clock event for everyone.
func (th *testHub) publishClock(running bool) {
	th.h.Publish([]engine.Event{{Type: engine.EvClock, To: engine.ToEveryone, Data: engine.ClockEvent{Running: running}}})
}

// wsMessage is a server message as a client sees it.
type wsMessage struct {
	Type string          `json:"type"`
	Seq  uint64          `json:"seq"`
	Data json.RawMessage `json:"data"`
}

// wsConn is a real websocket client.
type wsConn struct {
	t testing.TB
	c *fastws.Conn
}

// dial connects a client through d (nil: a plain dialer) and reads its hello.
func (th *testHub) dial(d *fastws.Dialer, url string) *wsConn {
	th.t.Helper()
	if d == nil {
		d = &fastws.Dialer{HandshakeTimeout: 5 * time.Second}
	}
	if url == "" {
		url = th.url
	}
	c, _, err := d.Dial(url, nil)
	if err != nil {
		th.t.Fatalf("dial %s: %v", url, err)
	}
	th.t.Cleanup(func() { _ = c.Close() })
	w := &wsConn{t: th.t, c: c}
	w.expect("hello")
	return w
}

// expect reads messages until one of type typ arrives (5 s at most).
func (w *wsConn) expect(typ string) wsMessage {
	w.t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		_ = w.c.SetReadDeadline(deadline)
		_, b, err := w.c.ReadMessage()
		if err != nil {
			w.t.Fatalf("waiting for %q: %v", typ, err)
		}
		var m wsMessage
		if err := json.Unmarshal(b, &m); err != nil {
			w.t.Fatalf("bad message %q: %v", b, err)
		}
		if m.Type == typ {
			return m
		}
	}
}

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

// selfSignedTLS returns a server TLS config with a certificate for 127.0.0.1.
func selfSignedTLS(t testing.TB) *tls.Config {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1),
		Subject:      pkix.Name{CommonName: "127.0.0.1"},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
		IPAddresses:  []net.IP{net.ParseIP("127.0.0.1")},
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return &tls.Config{Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key}}}
}
