package ws

import (
	"bufio"
	"encoding/binary"
	"io"
	"net"
	"testing"
	"time"

	fastws "github.com/fasthttp/websocket"
)

// FuzzWSClientBytes sends arbitrary bytes after a websocket upgrade to a real server:
// whatever arrives, the connection ends with a close code of the protocol (never 1011,
// the reader's panic handler) or stays open waiting for the rest of a frame, and the
// server keeps serving. go test -fuzz FuzzWSClientBytes ./transport/ws
func FuzzWSClientBytes(f *testing.F) {
	f.Add(clientFrame(true, opText, []byte(`{"type":"auth","token":"x"}`), true))
	f.Add(append(clientFrame(false, opText, []byte("01234"), true), clientFrame(true, opContinuation, []byte("56789"), true)...))
	f.Add(clientFrame(true, opPing, []byte("abc"), true))
	f.Add(clientFrame(true, opClose, []byte{3, 232}, true))
	f.Add(clientFrame(true, opText, []byte("unmasked"), false))
	f.Add([]byte{0x81, 0xFF, 0x80, 0, 0, 0, 0, 0, 0, 0, 1, 2, 3, 4})
	f.Add([]byte{0x01, 0x85, 1, 2, 3, 4, 'a', 'b', 'c', 'd', 'e', 0x80, 0xFF, 0x7F, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFB, 1, 2, 3, 4})
	th := startHub(f, Config{})
	addr := th.addr
	f.Fuzz(func(t *testing.T, data []byte) {
		nc, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer nc.Close()
		_ = nc.SetDeadline(time.Now().Add(5 * time.Second))
		if _, err := nc.Write([]byte(rawUpgrade)); err != nil {
			t.Fatal(err)
		}
		br := bufio.NewReader(nc)
		for {
			line, err := br.ReadString('\n')
			if err != nil {
				t.Fatalf("upgrade: %v", err)
			}
			if line == "\r\n" {
				break
			}
		}
		_, _ = nc.Write(data)
		_ = nc.SetReadDeadline(time.Now().Add(300 * time.Millisecond))
		for {
			var h [2]byte
			if _, err := io.ReadFull(br, h[:]); err != nil {
				break // closed, or the server waits for the rest of a frame (read deadline)
			}
			n := int(h[1] & 0x7F)
			switch n {
			case 126:
				var l [2]byte
				if _, err := io.ReadFull(br, l[:]); err != nil {
					return
				}
				n = int(binary.BigEndian.Uint16(l[:]))
			case 127:
				var l [8]byte
				if _, err := io.ReadFull(br, l[:]); err != nil {
					return
				}
				n = int(binary.BigEndian.Uint64(l[:]))
			}
			p := make([]byte, n)
			if _, err := io.ReadFull(br, p); err != nil {
				break
			}
			if h[0]&0x0F == opClose {
				if len(p) >= 2 && binary.BigEndian.Uint16(p) == fastws.CloseInternalServerErr {
					t.Fatalf("connection ended by the panic handler (1011) for % x", data)
				}
				break
			}
		}
		c, _, err := (&fastws.Dialer{HandshakeTimeout: 5 * time.Second}).Dial(th.url, nil)
		if err != nil {
			t.Fatalf("server gone after % x: %v", data, err)
		}
		_ = c.Close()
	})
}
