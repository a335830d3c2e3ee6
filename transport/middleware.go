package transport

import (
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"
)

// Body limits of SPEC §1 and §9.
const (
	maxJSONBody        = 1 << 20
	maxMultipartBody   = 32 << 20
	maxContentItemBody = 2 << 20
	maxBulkContentBody = 64 << 20
)

// bodyLimit enforces the per-route body limits (the Fiber limit is the largest one).
func (s *Server) bodyLimit(c *fiber.Ctx) error {
	n := len(c.Request().Body())
	if n <= maxJSONBody {
		return c.Next()
	}
	limit := maxJSONBody
	path := c.Path()
	switch {
	case strings.HasPrefix(strings.ToLower(c.Get(fiber.HeaderContentType)), "multipart/form-data"):
		limit = maxMultipartBody
	case path == "/api/admin/content" || path == "/api/admin/content/":
		limit = maxBulkContentBody
	case strings.HasPrefix(path, "/api/admin/content/"):
		limit = maxContentItemBody
	case path == "/api/cluster/forward": // cluster nodes only: a forwarded command is as big as the request that made it
		limit = maxBulkContentBody + maxJSONBody
	}
	if n > limit {
		return fiber.ErrRequestEntityTooLarge
	}
	return c.Next()
}

// routeLabel is the route template for logs and metrics ("unmatched" when no route
// matched). entry is the route the request had when requestLog began: the middleware
// route, which Fiber still reports after the chain when no route matched (Fiber rewrites
// a middleware route's Method from "USE" to the request's method).
func routeLabel(c *fiber.Ctx, entry *fiber.Route) string {
	r := c.Route()
	if r == nil || r == entry || r.Method == "USE" {
		return "unmatched"
	}
	return r.Path
}

// requestLog writes one log line per request (method, route template, status,
// duration; never the raw URL, headers or bodies) and feeds the metrics observer.
func (s *Server) requestLog(c *fiber.Ctx) error {
	start := time.Now()
	entry := c.Route()
	err := c.Next()
	if err != nil {
		if herr := s.handleError(c, err); herr != nil {
			_ = c.SendStatus(fiber.StatusInternalServerError)
		}
	}
	d := time.Since(start)
	status := c.Response().StatusCode()
	route := routeLabel(c, entry)
	method := c.Method()
	s.obs.Request(route, method, status, d)
	ev := s.log.Info()
	if status >= 500 {
		ev = s.log.Error()
	}
	ev.Str("method", method).Str("route", route).Int("status", status).
		Float64("duration_ms", float64(d.Microseconds())/1000).Str("ip", s.clientIP(c)).Msg("request")
	return nil
}
