package ws

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"io"
	"net"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	fastws "github.com/fasthttp/websocket"

	"podium/engine"
)

// A websocket connection after the upgrade (docs/behaviour.md#realtime), built for 20,000 mostly idle
// sockets on two cores. The library (fasthttp/websocket) performs the handshake only;
// the hub then owns the socket itself:
//
//   - One goroutine per connection, the reader, with a shallow stack. Fasthttp's hijack
//     goroutine, its request context and its 8 KiB read buffer are released as soon as
//     the handshake is done (Server.KeepHijackedConns), and an idle reader waits for a
//     2-byte frame header held in the client struct: no read buffer while idle.
//   - No writer goroutine while nothing waits to be sent. A delivery is framed into a
//     buffer of the goroutine sending it and written with one non-blocking write
//     system call; only when the kernel's send buffer is full does the rest go to a
//     backlog and a writer goroutine start, which blocks (with the write timeout) until
//     the backlog is flushed and then ends. A client with 64 deliveries in its backlog
//     is slow and is dropped.
//   - Pings come from one hub ticker, not a timer per connection.

// Frame opcodes (RFC 6455 §5.2).
const (
	opContinuation = 0x0
	opText         = 0x1
	opBinary       = 0x2
	opClose        = 0x8
	opPing         = 0x9
	opPong         = 0xA
)

// wsMsg is one server message, shared by every recipient. A data message is encoded
// once with the per-connection seq left out: head = `{"type":"clock","seq":`, tail =
// `,"data":{...}}`. A control frame (ping, pong, close) has op set and its payload in
// tail.
type wsMsg struct {
	typ  string
	op   byte // 0 for a data message
	head []byte
	tail []byte
}

func newWSMsg(typ string, data any) (*wsMsg, error) {
	d, err := json.Marshal(data)
	if err != nil {
		return nil, err
	}
	t, _ := json.Marshal(typ)
	head := make([]byte, 0, len(t)+16)
	head = append(append(append(head, `{"type":`...), t...), `,"seq":`...)
	tail := make([]byte, 0, len(d)+10)
	tail = append(append(append(tail, `,"data":`...), d...), '}')
	return &wsMsg{typ: typ, head: head, tail: tail}, nil
}

var pingMsg = &wsMsg{op: opPing}

// appendFrameHeader appends the header of a final, unmasked (server) frame.
func appendFrameHeader(b []byte, op byte, n int) []byte {
	b = append(b, 0x80|op)
	switch {
	case n < 126:
		return append(b, byte(n))
	case n <= 0xFFFF:
		return append(b, 126, byte(n>>8), byte(n))
	}
	return binary.BigEndian.AppendUint64(append(b, 127), uint64(n))
}

// client is one websocket connection.
type client struct {
	h  *Hub
	nc net.Conn        // the socket (TCP, or TLS when the server terminates it)
	rc syscall.RawConn // non-blocking writes; nil when nc has no file descriptor (TLS)
	ip string

	once   sync.Once
	dead   atomic.Bool // kill was called
	reason string      // drop reason (metrics); set once, read after the reader ended

	mu      sync.Mutex
	seq     uint64
	writing bool          // a writer goroutine owns the socket
	closed  bool          // no more writes: close frame queued, write failed, or the connection ended
	partial []byte        // the unwritten end of the last non-blocking write
	backlog [][]*wsMsg    // deliveries waiting for the writer goroutine (allocated on first use)
	flushed chan struct{} // closed when the writer goroutine ends (made by finish)

	pre []byte   // bytes read before the hub took the socket (normally none)
	hdr [14]byte // frame header being read

	// guarded by hub.mu
	Roles
	role string // the role counted in the connections gauge
	idx  int    // position in hub.clients (-1 once unregistered)
}

// Roles says what a connection proved. The hashes of cookie sessions and judge tokens
// are kept so that a session that ends (logout, a newer login, expiry) ends the
// connection too.
type Roles struct {
	Admin     bool
	AdminHash string    // admin session hash; "" when proved by password
	Judge     engine.ID // zero = not a judge
	JudgeHash string
}

func (c *client) roleName() string {
	switch {
	case c.Admin:
		return roleAdmin
	case !c.Judge.IsZero():
		return roleJudge
	}
	return roleAnonymous
}

func newClient(h *Hub, nc net.Conn, pre []byte, ip string) *client {
	c := &client{h: h, nc: nc, pre: pre, ip: ip}
	if sc, ok := nc.(syscall.Conn); ok {
		if rc, err := sc.SyscallConn(); err == nil {
			c.rc = rc
		}
	}
	return c
}

// appendDelivery frames the messages of d into b, numbering data messages. Called with
// c.mu held.
func (c *client) appendDelivery(b []byte, d []*wsMsg) []byte {
	var num [20]byte
	for _, m := range d {
		if m.op != 0 {
			b = appendFrameHeader(b, m.op, len(m.tail))
			b = append(b, m.tail...)
			continue
		}
		c.seq++
		s := strconv.AppendUint(num[:0], c.seq, 10)
		b = appendFrameHeader(b, opText, len(m.head)+len(s)+len(m.tail))
		b = append(append(append(b, m.head...), s...), m.tail...)
	}
	return b
}

// deliver sends d without ever blocking: written at once when the socket takes it,
// else added to the backlog of the writer goroutine. buf is the caller's scratch buffer
// (it may grow). It returns the number of data messages handed to the socket.
func (c *client) deliver(d []*wsMsg, buf *[]byte) int {
	if len(d) == 0 {
		return 0
	}
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return 0
	}
	if c.writing {
		if len(d) == 1 && d[0] == pingMsg {
			c.mu.Unlock()
			return 0 // the socket is busy: the write timeout watches it
		}
		if len(c.backlog) >= wsQueueLen {
			c.mu.Unlock()
			c.fail(dropSlow)
			return 0
		}
		c.backlog = append(c.backlog, d)
		c.mu.Unlock()
		return dataCount(d)
	}
	b := c.appendDelivery((*buf)[:0], d)
	*buf = b[:0]
	n, err := c.tryWrite(b)
	if err != nil {
		c.closed = true
		c.mu.Unlock()
		c.writeFailed(err)
		return 0
	}
	if n < len(b) {
		c.partial = append(c.partial[:0], b[n:]...)
		c.startWriterLocked()
	}
	c.mu.Unlock()
	return dataCount(d)
}

func dataCount(d []*wsMsg) int {
	n := 0
	for _, m := range d {
		if m.op == 0 {
			n++
		}
	}
	return n
}

// tryWrite makes one non-blocking write of b and returns how much the kernel took.
// Without a file descriptor (TLS) it takes nothing: the writer goroutine writes.
func (c *client) tryWrite(b []byte) (int, error) {
	if c.rc == nil {
		return 0, nil
	}
	n := 0
	var werr error
	err := c.rc.Write(func(fd uintptr) bool {
		for n < len(b) {
			m, e := syscall.Write(int(fd), b[n:])
			if e == syscall.EINTR {
				continue
			}
			if e != nil {
				if e != syscall.EAGAIN {
					werr = e
				}
				break
			}
			if m <= 0 {
				break
			}
			n += m
		}
		return true // never wait: the writer goroutine does
	})
	if err == nil {
		err = werr
	}
	return n, err
}

// startWriterLocked hands the socket to a writer goroutine. Called with c.mu held.
func (c *client) startWriterLocked() {
	c.writing = true
	go c.writeBacklog()
}

// writeBacklog is the writer goroutine: it writes the partial frame and the backlog with
// blocking writes (each bounded by the write timeout) until nothing is left, then ends.
func (c *client) writeBacklog() {
	var buf []byte
	for {
		c.mu.Lock()
		if len(c.partial) == 0 && len(c.backlog) == 0 {
			c.writing = false
			if c.flushed != nil {
				close(c.flushed)
				c.flushed = nil
			}
			c.mu.Unlock()
			return
		}
		buf = append(buf[:0], c.partial...)
		c.partial = nil
		for _, d := range c.backlog {
			buf = c.appendDelivery(buf, d)
		}
		c.backlog = nil
		closing := c.closed
		c.mu.Unlock()
		if !closing { // a close frame keeps the short deadline kill set
			_ = c.nc.SetWriteDeadline(time.Now().Add(c.h.t.WriteTimeout))
		}
		if _, err := c.nc.Write(buf); err != nil {
			c.mu.Lock()
			c.closed, c.backlog, c.partial = true, nil, nil
			c.mu.Unlock()
			c.writeFailed(err)
			continue // ends the loop through the empty check
		}
	}
}

// sendLast queues the close frame; nothing is written after it.
func (c *client) sendLast(closeMsg []byte) {
	var buf []byte
	c.deliver([]*wsMsg{{op: opClose, tail: closeMsg}}, &buf)
	c.mu.Lock()
	c.closed = true
	c.mu.Unlock()
}

// control answers a ping from the client (the reader goroutine calls it).
func (c *client) control(op byte, payload []byte) {
	var buf []byte
	c.deliver([]*wsMsg{{op: op, tail: append([]byte(nil), payload...)}}, &buf)
}

// kill ends the connection once: it wakes the reader (a read deadline in the past),
// sends closeMsg as the close frame when it is not nil, and stops all other writes. A
// slow client's writer is woken too: it is stuck in a write the client will never read.
func (c *client) kill(reason string, closeMsg []byte) {
	c.once.Do(func() {
		c.reason = reason
		c.dead.Store(true)
		_ = c.nc.SetReadDeadline(longAgo)
		switch {
		case reason == dropSlow:
			_ = c.nc.SetWriteDeadline(longAgo)
			c.closeWrites()
		case closeMsg != nil:
			_ = c.nc.SetWriteDeadline(time.Now().Add(time.Second))
			c.sendLast(closeMsg)
		default:
			c.closeWrites()
		}
	})
}

func closeMsg(code int, text string) []byte { return fastws.FormatCloseMessage(code, text) }

// closeWrites refuses further writes and drops the backlog.
func (c *client) closeWrites() {
	c.mu.Lock()
	c.closed, c.backlog = true, nil
	c.mu.Unlock()
}

// longAgo is a deadline that has passed: it makes blocked reads and writes return.
var longAgo = time.Unix(1, 0)

// killed reports whether kill was called.
func (c *client) killed() bool { return c.dead.Load() }

// writeFailed ends the connection after a failed write; a write that timed out means the
// client stopped reading.
func (c *client) writeFailed(err error) {
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		c.fail(dropSlow)
		return
	}
	c.fail("")
}

// fail kills the connection after a write problem, unless it is being killed already
// (kill's own close frame can fail; calling kill from inside kill would deadlock).
func (c *client) fail(reason string) {
	if !c.killed() {
		c.kill(reason, nil)
	}
}

// finish waits for the writer goroutine and refuses all later writes: after it the
// socket may be closed.
func (c *client) finish() {
	c.mu.Lock()
	c.closed = true
	var wait chan struct{}
	if c.writing {
		if c.flushed == nil {
			c.flushed = make(chan struct{})
		}
		wait = c.flushed
	}
	c.mu.Unlock()
	if wait != nil {
		<-wait
	}
}

// --- reading ---

// errProtocol is a frame that breaks RFC 6455; the connection closes with 1002.
var errProtocol = errors.New("websocket protocol error")

// errTooBig is an inbound message over wsMaxInbound; the connection closes with 1009.
var errTooBig = errors.New("websocket message too big")

// errPeerClosed is a close frame from the client (already answered).
var errPeerClosed = errors.New("closed by the client")

func (c *client) readFull(p []byte) error {
	if len(c.pre) > 0 {
		n := copy(p, c.pre)
		c.pre = c.pre[n:]
		if len(c.pre) == 0 {
			c.pre = nil
		}
		p = p[n:]
	}
	if len(p) == 0 {
		return nil
	}
	_, err := io.ReadFull(c.nc, p)
	return err
}

// readMessage reads the next data message (at most wsMaxInbound bytes), answering
// pings and the client's close frame on the way. Payload buffers are allocated only
// when a frame arrives.
func (c *client) readMessage() ([]byte, error) {
	var msg []byte
	inMessage := false
	for {
		if err := c.readFull(c.hdr[:2]); err != nil {
			return nil, err
		}
		b0, b1 := c.hdr[0], c.hdr[1]
		fin, op := b0&0x80 != 0, b0&0x0F
		if b0&0x70 != 0 || b1&0x80 == 0 { // reserved bits (no extensions), unmasked client frame
			return nil, errProtocol
		}
		n := uint64(b1 & 0x7F)
		switch n {
		case 126:
			if err := c.readFull(c.hdr[2:4]); err != nil {
				return nil, err
			}
			n = uint64(binary.BigEndian.Uint16(c.hdr[2:4]))
		case 127:
			if err := c.readFull(c.hdr[2:10]); err != nil {
				return nil, err
			}
			n = binary.BigEndian.Uint64(c.hdr[2:10])
			if n>>63 != 0 { // the most significant bit must be 0 (RFC 6455 §5.2)
				return nil, errProtocol
			}
		}
		key := c.hdr[10:14]
		if err := c.readFull(key); err != nil {
			return nil, err
		}
		control := op >= opClose
		switch {
		case control && (!fin || n > 125):
			return nil, errProtocol
		case op == opContinuation && !inMessage, (op == opText || op == opBinary) && inMessage:
			return nil, errProtocol
		case op != opContinuation && op != opText && op != opBinary && op != opClose && op != opPing && op != opPong:
			return nil, errProtocol
		case !control && (n > wsMaxInbound || uint64(len(msg))+n > wsMaxInbound): // n first: the sum could wrap
			return nil, errTooBig
		}
		start := len(msg)
		if control {
			start = 0
		}
		payload := make([]byte, start+int(n))
		if !control {
			copy(payload, msg)
		}
		if err := c.readFull(payload[start:]); err != nil {
			return nil, err
		}
		for i := range payload[start:] {
			payload[start+i] ^= key[i&3]
		}
		switch op {
		case opPing:
			c.control(opPong, payload)
		case opPong:
			if c.killed() {
				return nil, errConnKilled
			}
			_ = c.nc.SetReadDeadline(time.Now().Add(c.h.t.ReadTimeout))
		case opClose:
			echo := []byte{}
			switch {
			case n == 1:
				return nil, errProtocol
			case n >= 2:
				echo = closeMsg(int(binary.BigEndian.Uint16(payload)), "")
			}
			c.kill("", echo)
			return nil, errPeerClosed
		default:
			msg, inMessage = payload, true
			if fin {
				return msg, nil
			}
		}
	}
}

var errConnKilled = errors.New("connection closed by the server")

// readLoop reads until the connection ends and says why it ended: a drop reason with
// its close frame, or "" for an ordinary end.
func (c *client) readLoop() (reason string, closeFrame []byte) {
	for {
		// Set the deadline before looking at dead: a kill after the check moves the
		// deadline into the past and wakes the read below.
		_ = c.nc.SetReadDeadline(time.Now().Add(c.h.t.ReadTimeout))
		if c.killed() {
			return "", nil
		}
		data, err := c.readMessage()
		if err != nil {
			var ne net.Error
			switch {
			case errors.Is(err, errTooBig):
				return dropOversize, closeMsg(fastws.CloseMessageTooBig, "message too big")
			case errors.Is(err, errProtocol):
				return "", closeMsg(fastws.CloseProtocolError, "")
			case errors.As(err, &ne) && ne.Timeout() && !c.killed():
				return dropIdle, closeMsg(fastws.CloseGoingAway, "idle")
			}
			return "", closeMsg(fastws.CloseNormalClosure, "")
		}
		c.h.inbound(c, data)
	}
}
