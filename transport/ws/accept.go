package ws

import (
	"encoding/json"
	"net"
	"time"

	fastws "github.com/fasthttp/websocket"
)

// Accept takes the socket of an upgraded connection (hjc, fasthttp's wrapper, whose
// buffered bytes are read out first) with the ip and roles its upgrade request proved,
// and runs its reader goroutine. It returns at once: the hijack handler and everything
// fasthttp holds for it end here.
func (h *Hub) Accept(hjc net.Conn, ip string, r Roles) {
	nc, pre := takeConn(hjc)
	// Bound the kernel's send buffer (the upgrade handler bounds it too, but the
	// listener's wrapper hides the TCP connection there): a client that stops reading
	// is dropped after about SocketSendBuffer plus its backlog, not the MiBs Linux
	// autotuning allows.
	if tc, ok := nc.(interface{ SetWriteBuffer(int) error }); ok {
		_ = tc.SetWriteBuffer(SocketSendBuffer)
	}
	c := newClient(h, nc, pre, ip)
	if !h.register(c, r) {
		c.kill("", closeMsg(fastws.CloseTryAgainLater, "server full or shutting down"))
		c.finish()
		_ = nc.Close()
		return
	}
	go h.serve(c)
}

// takeConn returns the connection under fasthttp's hijack wrapper and the bytes its
// reader had buffered (normally none: a client waits for the handshake's answer before
// it sends). The wrapper's reader is released when the hijack handler returns. A
// connection with a PlainConn method (the listener's idle-write wrapper) is unwrapped
// too: the hub sets its own write deadlines, and its non-blocking writes need the file
// descriptor.
func takeConn(hjc net.Conn) (net.Conn, []byte) {
	u, ok := hjc.(interface{ UnsafeConn() net.Conn })
	if !ok {
		return hjc, nil
	}
	raw := u.UnsafeConn()
	if w, ok := raw.(interface{ PlainConn() net.Conn }); ok {
		raw = w.PlainConn() // the hub sets its own write deadlines
	}
	// With a deadline in the past, a read returns what is buffered or fails at once.
	_ = raw.SetReadDeadline(longAgo)
	var pre []byte
	var buf [512]byte
	for {
		n, err := hjc.Read(buf[:])
		pre = append(pre, buf[:n]...)
		if err != nil || n == 0 {
			break
		}
	}
	_ = raw.SetReadDeadline(time.Time{})
	return raw, pre
}

// serve is the connection's reader goroutine, its only goroutine while nothing waits to
// be written. It closes the socket when the connection ends.
func (h *Hub) serve(c *client) {
	defer h.handlers.Done()
	defer func() {
		if v := recover(); v != nil {
			h.log.Error().Interface("panic", v).Msg("websocket handler panicked")
			c.kill("", closeMsg(fastws.CloseInternalServerErr, ""))
		}
		h.unregister(c)
		c.finish()
		_ = c.nc.Close()
		if c.reason != "" {
			h.obs.WSDropped(c.reason)
		}
	}()
	c.kill(c.readLoop())
}

// wsInbound is a client message. Only "auth" means something; others are ignored.
type wsInbound struct {
	Type     string  `json:"type"`
	Token    *string `json:"token"`
	Password *string `json:"password"`
}

// inbound handles a client message: {"type":"auth","token":...} makes the connection a
// judge's, {"type":"auth","password":...} an admin's. A failed or throttled attempt
// closes the connection with 1008 (policy violation).
func (h *Hub) inbound(c *client, data []byte) {
	var m wsInbound
	if json.Unmarshal(data, &m) != nil || m.Type != "auth" {
		return
	}
	r, refusal := h.auth.Authenticate(c.ip, m.Token, m.Password)
	if refusal != "" {
		c.kill("", closeMsg(fastws.ClosePolicyViolation, refusal))
		return
	}
	h.authenticate(c, r)
}
