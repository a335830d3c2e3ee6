package transport

import (
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/rs/zerolog"
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

// slowRequest is the duration from which a successful request is logged at info.
const slowRequest = 500 * time.Millisecond

// requestLog feeds the metrics observer with every request and writes its log line
// (method, route template, status, duration, client IP; never the raw URL, headers or
// bodies). Which requests get a line at which level is in docs/behaviour.md ("Security
// and limits"): server errors always (error); client errors (info) at most once a second
// per route and address, with the count of the others; successful requests at debug,
// or at info when slower than slowRequest. Formatting a line is a good part of a cheap
// request's cost, so the success path builds none unless debug is on.
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
	var ev *zerolog.Event
	switch {
	case status >= 500:
		ev = s.log.Error()
	case status >= 400 || d >= slowRequest:
		ev = s.log.Info()
	default:
		ev = s.log.Debug()
	}
	if ev.Enabled() {
		s.logRequest(ev, route, method, status, d, s.clientIP(c))
	} else {
		ev.Discard()
	}
	return nil
}
