package transport

import (
	"crypto/tls"
	"errors"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/rs/zerolog"
)

// Staying up (docs/behaviour.md#operations): the accept loop never ends because the process ran out of file
// descriptors (fasthttp's own loop returns on the first EMFILE, and the server would stop
// with nothing wrong), and a client that stops reading cannot hold a response writer
// forever.

const (
	acceptBackoffMin = 5 * time.Millisecond
	acceptBackoffMax = time.Second

	// idleWriteTimeout: a response write that moves less than writeChunk to the kernel
	// in this long fails and the connection closes.
	idleWriteTimeout = 30 * time.Second
	writeChunk       = 64 << 10
)

// guardedListener retries temporary accept errors (EMFILE, ENFILE, ENOBUFS, ENOMEM,
// ECONNABORTED) with exponential back-off instead of returning them, and wraps every
// connection in an idleWriteConn.
type guardedListener struct {
	net.Listener
	log     zerolog.Logger
	lastLog atomic.Int64 // unix nanos of the last "accept failed" line
	skipped atomic.Int64 // errors not logged since
	idle    time.Duration
}

func newGuardedListener(ln net.Listener, log zerolog.Logger, idle time.Duration) *guardedListener {
	return &guardedListener{Listener: ln, log: log, idle: idle}
}

// Accept waits for the next connection.
func (l *guardedListener) Accept() (net.Conn, error) {
	delay := acceptBackoffMin
	for {
		c, err := l.Listener.Accept()
		if err == nil {
			ic := &idleWriteConn{Conn: c, idle: l.idle}
			if tc, ok := c.(*tls.Conn); ok {
				return &idleWriteTLSConn{idleWriteConn: ic, tls: tc}, nil
			}
			return ic, nil
		}
		if !temporaryAcceptError(err) {
			return nil, err
		}
		l.logAcceptError(err, delay)
		time.Sleep(delay)
		delay = min(2*delay, acceptBackoffMax)
	}
}

// logAcceptError logs at most one line per second, with the count of the others.
func (l *guardedListener) logAcceptError(err error, delay time.Duration) {
	now := time.Now().UnixNano()
	last := l.lastLog.Load()
	if now-last < int64(time.Second) || !l.lastLog.CompareAndSwap(last, now) {
		l.skipped.Add(1)
		return
	}
	l.log.Warn().Err(err).Int64("count", l.skipped.Swap(0)+1).Dur("retry_in", delay).
		Msg("accept failed; retrying (out of file descriptors?)")
}

// temporaryAcceptError reports errors after which accepting again later can succeed.
func temporaryAcceptError(err error) bool {
	if errors.Is(err, net.ErrClosed) {
		return false
	}
	for _, e := range []error{syscall.EMFILE, syscall.ENFILE, syscall.ENOBUFS, syscall.ENOMEM,
		syscall.ECONNABORTED, syscall.ECONNRESET, syscall.EAGAIN, syscall.EINTR, syscall.EPROTO, syscall.EPERM} {
		if errors.Is(err, e) {
			return true
		}
	}
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// idleWriteConn gives writes an idle timeout: each writeChunk of a write must be taken
// by the kernel within idle, unless whoever owns the connection set its own write
// deadline (the websocket writer does), which then applies as set.
type idleWriteConn struct {
	net.Conn
	idle time.Duration

	mu       sync.Mutex
	explicit time.Time // deadline set through SetDeadline/SetWriteDeadline (zero: none)
}

// PlainConn is the connection under the idle-write wrapper: a websocket sets its own
// write deadlines, and its non-blocking writes need the file descriptor (package ws).
func (c *idleWriteConn) PlainConn() net.Conn { return c.Conn }

// Write writes p with an idle deadline: a write that times out having moved at least
// writeChunk bytes (or all that was left) in that time is continued with a fresh
// deadline, so a reader slower than writeChunk per idle fails as before. p goes to the
// kernel whole, not in writeChunk pieces, so a large body costs no more system calls
// and deadline updates than the socket buffer needs.
func (c *idleWriteConn) Write(p []byte) (int, error) {
	n := 0
	for {
		c.mu.Lock()
		idle := c.explicit.IsZero()
		if idle {
			_ = c.Conn.SetWriteDeadline(time.Now().Add(c.idle))
		}
		c.mu.Unlock()
		m, err := c.Conn.Write(p)
		n += m
		enough := m >= min(writeChunk, len(p))
		p = p[m:]
		if err == nil || !idle || !enough || !errors.Is(err, os.ErrDeadlineExceeded) {
			return n, err
		}
	}
}

// SetDeadline sets read and write deadlines; the write one replaces the idle timeout.
func (c *idleWriteConn) SetDeadline(t time.Time) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.explicit = t
	return c.Conn.SetDeadline(t)
}

// SetWriteDeadline sets a write deadline that replaces the idle timeout (zero: back to
// the idle timeout).
func (c *idleWriteConn) SetWriteDeadline(t time.Time) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.explicit = t
	return c.Conn.SetWriteDeadline(t)
}

// SetWriteBuffer sets the socket's send buffer (SO_SNDBUF) when the connection has one.
func (c *idleWriteConn) SetWriteBuffer(n int) error {
	if tc, ok := c.Conn.(interface{ SetWriteBuffer(int) error }); ok {
		return tc.SetWriteBuffer(n)
	}
	return nil
}

// CloseWrite shuts the sending side down when the connection supports it.
func (c *idleWriteConn) CloseWrite() error {
	if tc, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return tc.CloseWrite()
	}
	return c.Conn.Close()
}

// idleWriteTLSConn is an idleWriteConn over TLS; it keeps the methods by which fasthttp
// recognises a TLS connection (secure cookies, c.Protocol()).
type idleWriteTLSConn struct {
	*idleWriteConn
	tls *tls.Conn
}

// Handshake runs the TLS handshake.
func (c *idleWriteTLSConn) Handshake() error { return c.tls.Handshake() }

// ConnectionState returns the TLS connection state.
func (c *idleWriteTLSConn) ConnectionState() tls.ConnectionState { return c.tls.ConnectionState() }

// fileLimit returns the process's soft limit on open files (0 when unknown).
func fileLimit() uint64 {
	var r syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &r); err != nil {
		return 0
	}
	return r.Cur
}

// clampWSConnections keeps the websocket cap below the file limit with room for HTTP
// connections, the data files and the listener: a fifth of the limit, at least 64.
// It returns the cap to use (want when it fits; 0 limit means unknown: want).
func clampWSConnections(want int, limit uint64) int {
	if limit == 0 || limit > 1<<31 {
		return want
	}
	room := max(limit/5, 64)
	if limit <= room {
		return 1
	}
	if avail := int(limit - room); want > avail {
		return avail
	}
	return want
}
