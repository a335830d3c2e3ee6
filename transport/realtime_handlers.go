package transport

import (
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	fastws "github.com/fasthttp/websocket"
	"github.com/gofiber/contrib/websocket"
	"github.com/gofiber/fiber/v2"
	"github.com/gofiber/fiber/v2/middleware/adaptor"
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

	r.Get("/api/ws", s.wsUpgrade, websocket.New(h.serve, websocket.Config{
		// Origins are checked by wsUpgrade (the server's own origin depends on the
		// request when PUBLIC_URL is unset, which a static list cannot express).
		Origins:         []string{"*"},
		ReadBufferSize:  1024,
		WriteBufferSize: 4096,
		WriteBufferPool: &sync.Pool{},
		RecoverHandler: func(conn *websocket.Conn) {
			if v := recover(); v != nil {
				s.log.Error().Interface("panic", v).Msg("websocket handler panicked")
				if conn.Conn != nil {
					_ = conn.NetConn().SetDeadline(longAgo)
				}
			}
		},
	}))
}

// wsUpgrade vets an upgrade request before the library takes it: origin (403),
// connection cap (503), and the roles its cookies or headers prove.
func (s *Server) wsUpgrade(c *fiber.Ctx) error {
	if !websocket.IsWebSocketUpgrade(c) {
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

// serve runs one connection. It stays blocked for the connection's whole life as its
// reader and returns only after the writer has finished: the library reuses conn after.
func (h *hub) serve(conn *websocket.Conn) {
	p, _ := conn.Locals(localWS).(*wsPeer)
	if p == nil {
		p = &wsPeer{}
	}
	c := &client{
		h: h, ws: conn.Conn, ip: p.ip,
		send: make(chan []*wsMsg, wsQueueLen),
		quit: make(chan struct{}), done: make(chan struct{}),
	}
	if !h.register(c, p.roles) {
		_ = c.ws.WriteControl(fastws.CloseMessage, fastws.FormatCloseMessage(fastws.CloseTryAgainLater, "server full or shutting down"), time.Now().Add(time.Second))
		return
	}
	defer h.handlers.Done()
	go c.writeLoop()
	defer func() {
		c.kill("", fastws.CloseInternalServerErr, "") // no-op unless the reader panicked
		h.unregister(c)
		<-c.done
		if c.reason != "" {
			h.obs.WSDropped(c.reason)
		}
	}()
	c.kill(c.readLoop())
}

// readLoop reads until the connection ends and says why it ended: a drop reason with
// its close frame, or "" for an ordinary end.
func (c *client) readLoop() (reason string, code int, text string) {
	ws, t := c.ws, c.h.t
	ws.SetReadLimit(wsMaxInbound)
	ws.SetPongHandler(func(string) error {
		if c.killed() {
			return errConnKilled
		}
		return ws.SetReadDeadline(time.Now().Add(t.ReadTimeout))
	})
	for {
		// Set the deadline before looking at quit: a kill after the check moves the
		// deadline into the past and wakes the read below.
		_ = ws.SetReadDeadline(time.Now().Add(t.ReadTimeout))
		if c.killed() {
			return "", 0, ""
		}
		_, data, err := ws.ReadMessage()
		if err != nil {
			var ne net.Error
			switch {
			case errors.Is(err, fastws.ErrReadLimit):
				return dropOversize, fastws.CloseMessageTooBig, "message too big"
			case errors.As(err, &ne) && ne.Timeout():
				return dropIdle, fastws.CloseGoingAway, "idle"
			}
			return "", fastws.CloseNormalClosure, ""
		}
		c.h.inbound(c, data)
	}
}

var errConnKilled = errors.New("connection closed by the server")

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
			c.kill("", fastws.ClosePolicyViolation, "authentication failed")
			return
		}
		r.judge, r.judgeHash = id, hashToken(*m.Token)
	}
	if m.Password != nil {
		key := "admin:" + c.ip
		if n, _ := s.adminFails.peek(key); n >= adminFailLimit {
			s.obs.Throttled("admin_login")
			c.kill("", fastws.ClosePolicyViolation, "too many failed logins")
			return
		}
		if !s.passwordOK(*m.Password) {
			s.adminFails.hit(key)
			c.kill("", fastws.ClosePolicyViolation, "authentication failed")
			return
		}
		r.admin = true
	}
	if !r.admin && r.judge.IsZero() {
		c.kill("", fastws.ClosePolicyViolation, "authentication failed")
		return
	}
	h.authenticate(c, r)
}
