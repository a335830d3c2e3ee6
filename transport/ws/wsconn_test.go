package ws

import (
	"bufio"
	"crypto/tls"
	"encoding/binary"
	"encoding/json"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	fastws "github.com/fasthttp/websocket"
)

// rawWS is a websocket client written against the wire format, to send what library
// clients never do: fragments, pings, frames glued to the upgrade request, bad frames.
type rawWS struct {
	t  *testing.T
	nc net.Conn
	br *bufio.Reader
}

const rawUpgrade = "GET /api/ws HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n" +
	"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"

// dialRaw sends the upgrade request followed by extra (frames sent before the answer)
// and reads the 101 answer.
func dialRaw(t *testing.T, th *testHub, extra []byte) *rawWS {
	t.Helper()
	nc, err := net.Dial("tcp", th.addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = nc.Close() })
	_ = nc.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := nc.Write(append([]byte(rawUpgrade), extra...)); err != nil {
		t.Fatal(err)
	}
	w := &rawWS{t: t, nc: nc, br: bufio.NewReader(nc)}
	status, err := w.br.ReadString('\n')
	if err != nil || !strings.Contains(status, " 101 ") {
		t.Fatalf("upgrade answer %q: %v", status, err)
	}
	for {
		line, err := w.br.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		if line == "\r\n" {
			return w
		}
	}
}

// clientFrame encodes a masked client frame.
func clientFrame(fin bool, op byte, payload []byte, masked bool) []byte {
	b0 := op
	if fin {
		b0 |= 0x80
	}
	b := []byte{b0}
	n := len(payload)
	mask := byte(0)
	if masked {
		mask = 0x80
	}
	switch {
	case n < 126:
		b = append(b, mask|byte(n))
	default:
		b = append(b, mask|126, byte(n>>8), byte(n))
	}
	if !masked {
		return append(b, payload...)
	}
	key := [4]byte{0x12, 0x34, 0x56, 0x78}
	b = append(b, key[:]...)
	for i, c := range payload {
		b = append(b, c^key[i&3])
	}
	return b
}

func (w *rawWS) send(frames ...[]byte) {
	w.t.Helper()
	for _, f := range frames {
		if _, err := w.nc.Write(f); err != nil {
			w.t.Fatal(err)
		}
	}
}

// next reads one server frame (servers never mask).
func (w *rawWS) next() (op byte, payload []byte) {
	w.t.Helper()
	var h [2]byte
	if _, err := io.ReadFull(w.br, h[:]); err != nil {
		w.t.Fatalf("read frame: %v", err)
	}
	if h[0]&0x80 == 0 || h[1]&0x80 != 0 {
		w.t.Fatalf("server frame not final or masked: % x", h)
	}
	n := int(h[1] & 0x7F)
	switch n {
	case 126:
		var l [2]byte
		_, _ = io.ReadFull(w.br, l[:])
		n = int(binary.BigEndian.Uint16(l[:]))
	case 127:
		var l [8]byte
		_, _ = io.ReadFull(w.br, l[:])
		n = int(binary.BigEndian.Uint64(l[:]))
	}
	payload = make([]byte, n)
	if _, err := io.ReadFull(w.br, payload); err != nil {
		w.t.Fatal(err)
	}
	return h[0] & 0x0F, payload
}

// nextMessage skips control frames and decodes the next data message.
func (w *rawWS) nextMessage() wsMessage {
	w.t.Helper()
	for {
		op, p := w.next()
		if op != opText {
			continue
		}
		var m wsMessage
		if err := json.Unmarshal(p, &m); err != nil {
			w.t.Fatalf("bad message %q: %v", p, err)
		}
		return m
	}
}

// TestWSWireFormat drives the hand-written frame reader: a fragmented auth message sent
// in the same packet as the upgrade request, a ping with a payload, seq numbering, and a
// protocol error (an unmasked client frame) closing with 1002.
func TestWSWireFormat(t *testing.T) {
	th := startHub(t, Config{})
	auth, _ := json.Marshal(map[string]string{"type": "auth", "password": testPassword})
	glued := append(clientFrame(false, opText, auth[:7], true), clientFrame(true, opContinuation, auth[7:], true)...)
	w := dialRaw(t, th, glued)
	if m := w.nextMessage(); m.Type != "hello" || m.Seq != 1 {
		t.Fatalf("first message %+v, want hello seq 1", m)
	}
	// The fragmented auth makes the connection an admin's: a new hello with the role.
	var roleSeen bool
	for i := 0; i < 3 && !roleSeen; i++ {
		m := w.nextMessage()
		if m.Type == "hello" {
			var d struct{ Role string }
			_ = json.Unmarshal(m.Data, &d)
			roleSeen = d.Role == "admin"
		}
	}
	if !roleSeen {
		t.Fatal("fragmented auth message not understood")
	}
	w.send(clientFrame(true, opPing, []byte("abc"), true))
	for {
		op, p := w.next()
		if op == opPong {
			if string(p) != "abc" {
				t.Fatalf("pong payload %q", p)
			}
			break
		}
	}
	w.send(clientFrame(true, opText, []byte(`{"type":"noop"}`), false))
	for {
		op, p := w.next()
		if op == opClose {
			if code := binary.BigEndian.Uint16(p); code != fastws.CloseProtocolError {
				t.Fatalf("close code %d, want 1002", code)
			}
			break
		}
	}
}

// TestWSClientCloseIsEchoed: a close frame from the client is answered with its code.
func TestWSClientCloseIsEchoed(t *testing.T) {
	th := startHub(t, Config{})
	w := dialRaw(t, th, nil)
	w.nextMessage() // hello
	w.send(clientFrame(true, opClose, closeMsg(fastws.CloseNormalClosure, "bye"), true))
	op, p := w.next()
	if op != opClose || binary.BigEndian.Uint16(p) != fastws.CloseNormalClosure {
		t.Fatalf("answer op %d payload %q, want close 1000", op, p)
	}
	waitFor(t, "the connection to end", func() bool { return th.count() == 0 })
}

// TestWSOverTLS: without a file descriptor (TLS) every delivery goes through the writer
// goroutine; messages and their order are the same.
func TestWSOverTLS(t *testing.T) {
	th := startHubTLS(t, Config{}, selfSignedTLS(t))
	d := &fastws.Dialer{HandshakeTimeout: 5 * time.Second, TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}
	w := th.dial(d, "wss://"+th.addr+"/")
	th.publishClock(true)
	w.expect("clock")
	th.publishClock(false)
	w.expect("clock")
}

// TestWSChurnDuringBroadcasts: clients connect, read a little and vanish (some
// abruptly, some with a close frame) while broadcasts fan out over more than
// wsFanOutMin sockets; every connection ends cleanly and the hub empties.
func TestWSChurnDuringBroadcasts(t *testing.T) {
	th := startHub(t, Config{MaxConnections: 2000, MaxPerIP: 2000})
	stay := make([]*wsConn, 0, wsFanOutMin+50)
	for len(stay) < cap(stay) {
		stay = append(stay, th.dial(nil, ""))
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := 0; i < 10; i++ {
			th.publishClock(true)
			th.publishClock(false)
		}
	}()
	for i := 0; i < 100; i++ {
		c, _, err := (&fastws.Dialer{HandshakeTimeout: 5 * time.Second}).Dial(th.url, nil)
		if err != nil {
			t.Fatal(err)
		}
		if i%2 == 0 {
			_ = c.WriteControl(fastws.CloseMessage, closeMsg(fastws.CloseNormalClosure, ""), time.Now().Add(time.Second))
		}
		_ = c.Close()
	}
	<-done
	for _, w := range stay[:10] {
		for k := 0; k < 20; k++ {
			w.expect("clock")
		}
	}
	for _, w := range stay {
		_ = w.c.Close()
	}
	waitFor(t, "every connection to end", func() bool { return th.count() == 0 })
}

// TestWSHugeFrameLengths: 64-bit frame lengths that overflow a sum with the bytes
// already received, or that set the most significant bit (RFC 6455 §5.2), end the
// connection with a close code (1009 / 1002), never through the panic handler (1011).
func TestWSHugeFrameLengths(t *testing.T) {
	th := startHub(t, Config{})
	header := func(fin bool, op byte, n uint64) []byte {
		b0 := op
		if fin {
			b0 |= 0x80
		}
		b := []byte{b0, 0x80 | 127, 0, 0, 0, 0, 0, 0, 0, 0}
		binary.BigEndian.PutUint64(b[2:], n)
		return append(b, 1, 2, 3, 4) // mask key
	}
	for _, tc := range []struct {
		name   string
		frames [][]byte
		want   uint16
	}{
		// 10 bytes received, then a continuation whose length wraps the sum to 0 (such a
		// length has its top bit set: a protocol error; before, a panic in the reader).
		{"wrapping continuation", [][]byte{clientFrame(false, opText, []byte("0123456789"), true), header(true, opContinuation, ^uint64(0)-9)}, fastws.CloseProtocolError},
		{"huge continuation", [][]byte{clientFrame(false, opText, []byte("0123456789"), true), header(true, opContinuation, 1<<62)}, fastws.CloseMessageTooBig},
		{"most significant bit set", [][]byte{header(true, opText, 1<<63)}, fastws.CloseProtocolError},
		{"just over the limit", [][]byte{header(true, opText, wsMaxInbound+1)}, fastws.CloseMessageTooBig},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := dialRaw(t, th, nil)
			w.nextMessage() // hello
			w.send(tc.frames...)
			for {
				op, p := w.next()
				if op != opClose {
					continue
				}
				if code := binary.BigEndian.Uint16(p); code != tc.want {
					t.Fatalf("close code %d, want %d", code, tc.want)
				}
				break
			}
		})
	}
	th.dial(nil, "") // still serving
}
