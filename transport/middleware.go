package transport

import (
	"time"

	"github.com/gofiber/fiber/v2"
)

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
