package transport

import (
	"encoding/json"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	fastws "github.com/fasthttp/websocket"
	"github.com/gofiber/fiber/v2"
	"github.com/gofiber/fiber/v2/middleware/adaptor"
	"github.com/valyala/fasthttp"
)

// realtimeExt is the server's realtime part: the hub, its observer and the metrics
// endpoint.
type realtimeExt struct {
	hub     *hub
	obs     HubObserver
	metrics http.Handler
	timings *hubTimings
}

// WithHubObserver sets the websocket metrics observer.
func WithHubObserver(o HubObserver) Option {
	return func(s *Server) { s.ext.realtime.obs = o }
}

// WithMetricsHandler serves h (the Prometheus handler) at GET /metrics on the main app.
func WithMetricsHandler(h http.Handler) Option {
	return func(s *Server) { s.ext.realtime.metrics = h }
}

// withHubTimings replaces the websocket intervals (tests).
func withHubTimings(t hubTimings) Option {
	return func(s *Server) { s.ext.realtime.timings = &t }
}

const localWS = "podium.ws"

// wsPeer is what the upgrade request tells about the client, handed to the connection.
type wsPeer struct {
	roles
	ip string
}

// routesRealtime registers the websocket endpoint (SPEC §7) and metrics.
func (s *Server) routesRealtime(r fiber.Router) {
	rt := &s.ext.realtime
	if rt.metrics != nil {
		r.Get("/metrics", adaptor.HTTPHandler(rt.metrics))
	}
	t := defaultHubTimings
	if rt.timings != nil {
		t = *rt.timings
	}
	obs := rt.obs
	if obs == nil {
		obs = nopHubObserver{}
	}
	h := newHub(s, t, obs)
	rt.hub = h
	go h.run()
	s.node.SetEventSink(h.publish)
	s.onShutdown(h.shutdown)

	// The library does the handshake; the hub takes the raw socket from there
	// (wsconn.go). Hijacked connections are then the hub's to close: fasthttp releases
	// its request context, read buffer and goroutine at once instead of holding them
	// for the connection's life.
	s.app.Server().KeepHijackedConns = true
	up := &fastws.FastHTTPUpgrader{
		// Origins are checked by wsUpgrade (the server's own origin depends on the
		// request when PUBLIC_URL is unset, which a static list cannot express).
		CheckOrigin:     func(*fasthttp.RequestCtx) bool { return true },
		ReadBufferSize:  128, // the library's connection is dropped right after the handshake
		WriteBufferPool: &sync.Pool{},
	}
	r.Get("/api/ws", s.wsUpgrade, func(c *fiber.Ctx) error {
		p, _ := c.Locals(localWS).(*wsPeer)
		if p == nil {
			p = &wsPeer{}
		}
		if err := up.Upgrade(c.Context(), func(conn *fastws.Conn) { h.start(conn.NetConn(), p) }); err != nil {
			return fiber.ErrUpgradeRequired
		}
		return nil
	})
}

// wsUpgrade vets an upgrade request before the library takes it: origin (403),
// connection cap (503), and the roles its cookies or headers prove.
func (s *Server) wsUpgrade(c *fiber.Ctx) error {
	if !fastws.FastHTTPIsWebSocketUpgrade(c.Context()) {
		return &httpError{status: fiber.StatusUpgradeRequired, msg: "websocket upgrade required"}
	}
	if !s.originAllowed(c) {
		return &httpError{status: fiber.StatusForbidden, msg: "origin not allowed"}
	}
	// Bound the kernel's send buffer: a client that stops reading then fills its queue
	// (and is dropped) after ~wsSocketSendBuffer instead of the several MiB Linux
	// autotuning would let it hold.
	if tc, ok := c.Context().Conn().(interface{ SetWriteBuffer(int) error }); ok {
		_ = tc.SetWriteBuffer(wsSocketSendBuffer)
	}
	p := &wsPeer{ip: ipKey(s.clientIP(c))}
	if tok := bearerOrCookie(c); tok != "" {
		if id, ok := s.judgeFromToken(tok); ok {
			p.judge, p.judgeHash = id, hashToken(tok)
		}
	}
	basic := strings.HasPrefix(strings.ToLower(c.Get(fiber.HeaderAuthorization)), "basic ")
	if basic { // Basic credentials are a password attempt: throttled like admin logins
		key := "admin:" + p.ip
		if n, retry := s.adminFails.peek(key); n >= adminFailLimit {
			s.obs.Throttled("admin_login")
			return &httpError{status: fiber.StatusTooManyRequests, msg: "too many failed logins; try again later", retryAfter: retry}
		}
		if !s.adminFromRequest(c) {
			s.adminFails.hit(key)
			return errUnauthorized
		}
		p.admin = true
	} else if s.adminFromRequest(c) {
		p.admin, p.adminHash = true, hashToken(c.Cookies(cookieAdmin))
	}
	if err := s.ext.realtime.hub.admit(p.ip, p.admin); err != nil {
		reason := RejectWSFull
		if err == errWSPerIP {
			reason = RejectWSPerIP
		}
		s.obs.RequestRejected(reason)
		return err
	}
	c.Locals(localWS, p)
	return c.Next()
}

// originAllowed implements SPEC §7: no Origin header, the server's own origin (that of
// PUBLIC_URL when set, else the request's scheme and Host), or one of CORS_ORIGINS.
func (s *Server) originAllowed(c *fiber.Ctx) bool {
	origin := c.Get(fiber.HeaderOrigin)
	if origin == "" {
		return true
	}
	got := normalOrigin(origin)
	if got == "" {
		return false
	}
	own := normalOrigin(s.cfg.PublicURL)
	if s.cfg.PublicURL == "" {
		own = normalOrigin(s.requestOrigin(c))
	}
	if got == own {
		return true
	}
	for _, o := range s.cfg.CORSOrigins {
		if got == normalOrigin(o) {
			return true
		}
	}
	return false
}

// requestOrigin is the origin the client reached: scheme and Host of the request, or of
// X-Forwarded-Proto/-Host when the peer is a trusted proxy (SPEC §2; Fiber's Hostname and
// Protocol believe those headers from anyone).
func (s *Server) requestOrigin(c *fiber.Ctx) string {
	scheme := "http"
	if s.overTLS(c) {
		scheme = "https"
	}
	host := string(c.Request().URI().Host())
	if len(s.proxies) > 0 && s.trusted(c.Context().RemoteIP()) {
		if fh, _, _ := strings.Cut(c.Get(fiber.HeaderXForwardedHost), ","); strings.TrimSpace(fh) != "" {
			host = strings.TrimSpace(fh)
		}
	}
	return scheme + "://" + host
}

// normalOrigin reduces a URL or origin to "scheme://host[:port]", lower case, without a
// default port; "" when it is not an http(s) origin.
func normalOrigin(raw string) string {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil || u.Host == "" {
		return ""
	}
	scheme := strings.ToLower(u.Scheme)
	if scheme != "http" && scheme != "https" {
		return ""
	}
	host := strings.ToLower(u.Hostname())
	port := u.Port()
	if (scheme == "http" && port == "80") || (scheme == "https" && port == "443") {
		port = ""
	}
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	if port != "" {
		host += ":" + port
	}
	return scheme + "://" + host
}

// start takes the socket of an upgraded connection (hjc, fasthttp's wrapper, whose
// buffered bytes are read out first) and runs its reader goroutine. It returns at once:
// the hijack handler and everything fasthttp holds for it end here.
func (h *hub) start(hjc net.Conn, p *wsPeer) {
	nc, pre := takeConn(hjc)
	// Bound the kernel's send buffer (see wsUpgrade; the listener's wrapper hides the
	// TCP connection there): a client that stops reading is dropped after about
	// wsSocketSendBuffer plus its backlog, not the MiBs Linux autotuning allows.
	if tc, ok := nc.(interface{ SetWriteBuffer(int) error }); ok {
		_ = tc.SetWriteBuffer(wsSocketSendBuffer)
	}
	c := newClient(h, nc, pre, p.ip)
	if !h.register(c, p.roles) {
		c.kill("", closeMsg(fastws.CloseTryAgainLater, "server full or shutting down"))
		c.finish()
		_ = nc.Close()
		return
	}
	go h.serve(c)
}

// takeConn returns the connection under fasthttp's hijack wrapper and the bytes its
// reader had buffered (normally none: a client waits for the handshake's answer before
// it sends). The wrapper's reader is released when the hijack handler returns.
func takeConn(hjc net.Conn) (net.Conn, []byte) {
	u, ok := hjc.(interface{ UnsafeConn() net.Conn })
	if !ok {
		return hjc, nil
	}
	raw := u.UnsafeConn()
	if w, ok := raw.(interface{ plainConn() net.Conn }); ok {
		raw = w.plainConn() // the hub sets its own write deadlines
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
func (h *hub) serve(c *client) {
	defer h.handlers.Done()
	defer func() {
		if v := recover(); v != nil {
			h.s.log.Error().Interface("panic", v).Msg("websocket handler panicked")
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
func (h *hub) inbound(c *client, data []byte) {
	var m wsInbound
	if json.Unmarshal(data, &m) != nil || m.Type != "auth" {
		return
	}
	s := h.s
	var r roles
	if m.Token != nil {
		id, ok := s.judgeFromToken(*m.Token)
		if !ok {
			c.kill("", closeMsg(fastws.ClosePolicyViolation, "authentication failed"))
			return
		}
		r.judge, r.judgeHash = id, hashToken(*m.Token)
	}
	if m.Password != nil {
		key := "admin:" + c.ip
		if n, _ := s.adminFails.peek(key); n >= adminFailLimit {
			s.obs.Throttled("admin_login")
			c.kill("", closeMsg(fastws.ClosePolicyViolation, "too many failed logins"))
			return
		}
		if !s.passwordOK(*m.Password) {
			s.adminFails.hit(key)
			c.kill("", closeMsg(fastws.ClosePolicyViolation, "authentication failed"))
			return
		}
		r.admin = true
	}
	if !r.admin && r.judge.IsZero() {
		c.kill("", closeMsg(fastws.ClosePolicyViolation, "authentication failed"))
		return
	}
	h.authenticate(c, r)
}
