package transport

import (
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/chromedp/cdproto"
)

// netCut is a relay in front of a test server that the test switches off and on, as
// a hall's Wi-Fi drops and comes back: while it is off every open connection (the
// page's websocket, kept-alive requests, the service worker's fetches) is reset and
// every new one is reset as soon as it is accepted. The browser and its service worker
// still believe they are online (navigator.onLine stays true, as on a floor whose
// access point is up but passes nothing), so the app must tell a failed request from
// an offline flag by itself. It needs nothing of the browser beyond HTTP, so it works
// with every Chromium release (docs/behaviour.md#judge-app).
type netCut struct {
	URL    string // http://127.0.0.1:<relay port>, the address the browser opens
	ln     net.Listener
	target string
	off    atomic.Bool

	mu    sync.Mutex
	conns map[net.Conn]struct{}
	wg    sync.WaitGroup
}

// startNetCut starts a relay to ts on a fresh loopback port; it stops with the test.
func startNetCut(t *testing.T, ts *testServer) *netCut {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	n := &netCut{URL: "http://" + ln.Addr().String(), ln: ln, target: strings.TrimPrefix(ts.URL, "http://"), conns: map[net.Conn]struct{}{}}
	n.wg.Add(1)
	go n.accept()
	t.Cleanup(func() {
		ln.Close()
		n.set(true)
		n.wg.Wait()
	})
	return n
}

// set cuts the network (true) or restores it (false).
func (n *netCut) set(off bool) {
	n.off.Store(off)
	if !off {
		return
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	for c := range n.conns {
		reset(c)
	}
	clear(n.conns)
}

// reset closes c with a TCP reset, as a dropped link shows itself to the browser.
func reset(c net.Conn) {
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.SetLinger(0)
	}
	_ = c.Close()
}

func (n *netCut) accept() {
	defer n.wg.Done()
	for {
		c, err := n.ln.Accept()
		if err != nil {
			return
		}
		if n.off.Load() {
			reset(c)
			continue
		}
		up, err := net.Dial("tcp", n.target)
		if err != nil {
			reset(c)
			continue
		}
		if !n.track(c, up) {
			continue
		}
		n.wg.Add(2)
		go n.pipe(c, up)
		go n.pipe(up, c)
	}
}

// track registers both ends of a relayed connection, unless the network went off
// meanwhile (then both are reset).
func (n *netCut) track(a, b net.Conn) bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.off.Load() {
		reset(a)
		reset(b)
		return false
	}
	n.conns[a], n.conns[b] = struct{}{}, struct{}{}
	return true
}

func (n *netCut) pipe(dst, src net.Conn) {
	defer n.wg.Done()
	_, _ = io.Copy(dst, src)
	n.mu.Lock()
	delete(n.conns, dst)
	delete(n.conns, src)
	n.mu.Unlock()
	reset(dst)
	reset(src)
}

// chromiumVersion is the running browser's product string ("Chrome/156.0.…"), set by
// startChromium, for errors that depend on the release.
var chromiumVersion atomic.Value

// explainCDP turns an error of the DevTools protocol that means "this Chromium has no
// such method, or other parameters for it" into one line naming the browser's version
// and what is missing, instead of a bare "Invalid parameters (-32602)".
func explainCDP(err error) error {
	var pe *cdproto.Error
	if !errors.As(err, &pe) || (pe.Code != -32601 && pe.Code != -32602) {
		return err
	}
	v, _ := chromiumVersion.Load().(string)
	if v == "" {
		v = "this Chromium"
	}
	what := "lacks a DevTools method"
	if pe.Code == -32602 {
		what = "takes other parameters for a DevTools method"
	}
	return fmt.Errorf("%s %s this step uses (%v): the browser tests need the stable DevTools domains only; install Debian's current chromium", v, what, err)
}
