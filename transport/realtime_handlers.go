package transport

import (
	"errors"
	"net/http"
	"net/url"
	"strings"
	"sync"

	fastws "github.com/fasthttp/websocket"
	"github.com/gofiber/fiber/v2"
	"github.com/gofiber/fiber/v2/middleware/adaptor"
	"github.com/valyala/fasthttp"

	"podium/transport/ws"
)

// realtimeExt is the server's realtime part: the hub, its observer and the metrics
// endpoint.
type realtimeExt struct {
	hub     *ws.Hub
	obs     ws.Observer
	metrics http.Handler
	timings ws.Timings
}

// WithHubObserver sets the websocket metrics observer.
func WithHubObserver(o ws.Observer) Option {
	return func(s *Server) { s.ext.realtime.obs = o }
}

// WithMetricsHandler serves h (the Prometheus handler) at GET /metrics on the main app.
func WithMetricsHandler(h http.Handler) Option {
	return func(s *Server) { s.ext.realtime.metrics = h }
}

// withHubTimings replaces the websocket intervals (tests).
func withHubTimings(t ws.Timings) Option {
	return func(s *Server) { s.ext.realtime.timings = t }
}

const localWS = "podium.ws"

// wsPeer is what the upgrade request tells about the client, handed to the connection.
type wsPeer struct {
	ws.Roles
	ip string
}

// routesRealtime registers the websocket endpoint (docs/behaviour.md#realtime) and metrics.
func (s *Server) routesRealtime(r fiber.Router) {
	rt := &s.ext.realtime
	if rt.metrics != nil {
		r.Get("/metrics", adaptor.HTTPHandler(rt.metrics))
	}
	cfg := ws.Config{MaxConnections: s.cfg.MaxWSConnections, MaxPerIP: s.cfg.MaxWSPerIP, Timings: rt.timings}
	h := ws.New(cfg, s.node, wsAuth{s}, rt.obs, s.log)
	rt.hub = h
	go h.Run()
	s.node.SetEventSink(h.Publish)
	s.onShutdown(h.Shutdown)

	// The library does the handshake; the hub takes the raw socket from there
	// (package ws). Hijacked connections are then the hub's to close: fasthttp releases
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
		if err := up.Upgrade(c.Context(), func(conn *fastws.Conn) { h.Accept(conn.NetConn(), p.ip, p.Roles) }); err != nil {
			return fiber.ErrUpgradeRequired
		}
		return nil
	})
}

var (
	errWSFull  = &httpError{status: 503, msg: "too many websocket connections"}
	errWSPerIP = &httpError{status: 429, msg: "too many websocket connections from this address", retryAfter: 10}
)

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
	// (and is dropped) after ~ws.SocketSendBuffer instead of the several MiB Linux
	// autotuning would let it hold.
	if tc, ok := c.Context().Conn().(interface{ SetWriteBuffer(int) error }); ok {
		_ = tc.SetWriteBuffer(ws.SocketSendBuffer)
	}
	p := &wsPeer{ip: ipKey(s.clientIP(c))}
	if tok := bearerOrCookie(c); tok != "" {
		if id, ok := s.judgeFromToken(tok); ok {
			p.Judge, p.JudgeHash = id, hashToken(tok)
		}
	}
	basic := strings.HasPrefix(strings.ToLower(c.Get(fiber.HeaderAuthorization)), "basic ")
	if basic { // Basic credentials are a password attempt: throttled like admin logins
		key := "admin:" + p.ip
		if n, retry := s.adminFails.peek(key); n >= adminFailLimit {
			s.obs.Throttled("admin_login")
			return tooManyLogins("too many failed logins", retry)
		}
		if !s.adminFromRequest(c) {
			s.adminFails.hit(key)
			return errUnauthorized
		}
		p.Admin = true
	} else if s.adminFromRequest(c) {
		p.Admin, p.AdminHash = true, hashToken(c.Cookies(cookieAdmin))
	}
	if err := s.ext.realtime.hub.Admit(p.ip, p.Admin); err != nil {
		reason, herr := RejectWSFull, errWSFull
		if errors.Is(err, ws.ErrPerIP) {
			reason, herr = RejectWSPerIP, errWSPerIP
		}
		s.obs.RequestRejected(reason)
		return herr
	}
	c.Locals(localWS, p)
	return c.Next()
}

// originAllowed implements docs/behaviour.md#realtime: no Origin header, the server's own origin (that of
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
// X-Forwarded-Proto/-Host when the peer is a trusted proxy (docs/behaviour.md#authentication; Fiber's Hostname and
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

// wsAuth checks the credentials of a websocket "auth" message for the hub.
type wsAuth struct{ s *Server }

// Authenticate implements ws.Authenticator: a judge token, an admin password (throttled
// like admin logins), or both; neither is a refusal.
func (a wsAuth) Authenticate(ip string, token, password *string) (ws.Roles, string) {
	s := a.s
	var r ws.Roles
	if token != nil {
		id, ok := s.judgeFromToken(*token)
		if !ok {
			return r, "authentication failed"
		}
		r.Judge, r.JudgeHash = id, hashToken(*token)
	}
	if password != nil {
		key := "admin:" + ip
		if n, _ := s.adminFails.peek(key); n >= adminFailLimit {
			s.obs.Throttled("admin_login")
			return r, "too many failed logins"
		}
		if !s.passwordOK(*password) {
			s.adminFails.hit(key)
			return r, "authentication failed"
		}
		r.Admin = true
	}
	if !r.Admin && r.Judge.IsZero() {
		return r, "authentication failed"
	}
	return r, ""
}
