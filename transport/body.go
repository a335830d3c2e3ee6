package transport

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"mime"
	"slices"
	"strings"

	"github.com/gofiber/fiber/v2"
)

// Request bodies (docs/behaviour.md#conventions, #operations). The server streams every request body (Fiber's
// StreamRequestBody): fasthttp reads at most 8 KiB of it with the headers, and the rest
// stays on the socket until someone reads it. bodyGuard decides per route how much may be
// read and when:
//
//   - ordinary routes: up to 1 MiB, read before the handler (so before auth — a bounded
//     cost that every client may cause);
//   - admin bulk routes (content items, the bulk content document, CSV uploads): nothing
//     is read before the route's auth has passed; then up to the route's own limit.
//
// A body over its limit is 413 JSON. Its unread rest is read and thrown away (bounded by
// drainLimit) before the answer goes out, so that the client sees the 413 and not a
// connection reset; anything beyond drainLimit makes the server close the connection.

// Body limits of docs/behaviour.md#conventions, #public-content-api.
const (
	maxJSONBody        = 1 << 20
	maxMultipartBody   = 32 << 20
	maxContentItemBody = 2 << 20
	maxBulkContentBody = 64 << 20

	// drainLimit is how much of a refused or unread body is discarded to end the request
	// cleanly (the connection is closed when there is more).
	drainLimit = maxBulkContentBody + 1<<20
)

const localBody = "podium.body"

// bodyState is a request's body bookkeeping, kept in its locals.
type bodyState struct {
	limit   int
	pending bool // the body is still on the socket (a deferred route)
}

// bodyPolicy returns a route's body limit and whether its body is read only after its
// auth (the admin bulk routes; CSV uploads only as multipart forms). Paths are compared the way Fiber routes them
// (case-insensitive, trailing slash ignored); a request that does not match gets the
// 1 MiB default, the safe side.
func bodyPolicy(method, path, contentType string) (limit int, deferred bool) {
	p := strings.TrimSuffix(strings.ToLower(path), "/")
	switch {
	case method == fiber.MethodPut && p == "/api/admin/content":
		return maxBulkContentBody, true
	case (method == fiber.MethodPut || method == fiber.MethodPost) && strings.HasPrefix(p, "/api/admin/content/"):
		return maxContentItemBody, true
	case method == fiber.MethodPost && strings.HasPrefix(strings.ToLower(contentType), fiber.MIMEMultipartForm) && (p == "/api/judge/csv" || p == "/api/project/csv" ||
		p == "/api/project/submissions" || p == "/api/project/devpost" || p == "/api/admin/conflicts/csv"):
		return maxMultipartBody, true
	case method == fiber.MethodPost && p == "/api/cluster/forward":
		// Cluster nodes only, authenticated by an HMAC over the body: a forwarded command
		// is as big as the request that made it.
		return maxBulkContentBody + maxJSONBody, true
	}
	return maxJSONBody, false
}

func errTooLarge(limit int) error {
	return &httpError{status: fiber.StatusRequestEntityTooLarge, msg: fmt.Sprintf("request body too large (limit %d MiB)", limit>>20)}
}

var errEncodedBody = &httpError{status: fiber.StatusUnsupportedMediaType, msg: "compressed request bodies are not accepted (Content-Encoding)"}

// bodyGuard applies the body policy of the request's route (see the top of this file).
func (s *Server) bodyGuard(c *fiber.Ctx) error {
	h := &c.Request().Header
	cl := h.ContentLength() // -1 chunked, -2 none
	if cl == -2 {
		cl = 0
	}
	if cl != 0 {
		if enc := strings.TrimSpace(string(h.Peek(fiber.HeaderContentEncoding))); enc != "" && !strings.EqualFold(enc, "identity") {
			drainBody(c)
			s.obs.RequestRejected(RejectMediaType)
			return errEncodedBody
		}
	}
	if cl == 0 {
		return c.Next() // no body: nothing to bound (most requests)
	}
	limit, deferred := bodyPolicy(c.Method(), c.Path(), c.Get(fiber.HeaderContentType))
	if cl > limit {
		drainBody(c)
		s.obs.RequestRejected(RejectBodyTooLarge)
		return errTooLarge(limit)
	}
	st := &bodyState{limit: limit, pending: deferred}
	if !deferred {
		if err := readBody(c, st); err != nil {
			if he, ok := err.(*httpError); ok && he.status == fiber.StatusRequestEntityTooLarge {
				s.obs.RequestRejected(RejectBodyTooLarge)
			}
			return err
		}
		return c.Next()
	}
	c.Locals(localBody, st)
	err := c.Next()
	if st.pending { // refused before the handler read it (401, 404, ...)
		drainBody(c)
	}
	return err
}

// readBody reads the rest of the request body, at most st.limit bytes, and makes it the
// request's body (c.Body). Over the limit it is 413 and the rest is drained.
func readBody(c *fiber.Ctx, st *bodyState) error {
	st.pending = false
	req := c.Request()
	stream := req.BodyStream()
	if stream == nil {
		if len(req.Body()) > st.limit {
			return errTooLarge(st.limit)
		}
		return nil
	}
	b, err := readLimited(stream, st.limit, req.Header.ContentLength())
	if err != nil {
		if errors.Is(err, errOverLimit) {
			drainBody(c)
			return errTooLarge(st.limit)
		}
		c.Set(fiber.HeaderConnection, "close")
		return badRequest("cannot read the request body")
	}
	req.SetBodyRaw(b) // ours, never reused by fasthttp
	return nil
}

var errOverLimit = errors.New("body over limit")

// readLimited reads r to its end, failing with errOverLimit past limit bytes. sizeHint
// (the Content-Length, or < 0) sizes the buffer: a body of that size is read into one
// allocation, the spare byte taking the read that reports its end.
func readLimited(r io.Reader, limit, sizeHint int) ([]byte, error) {
	n := 512
	if sizeHint > 0 {
		n = min(sizeHint, limit) + 1
	}
	buf := make([]byte, 0, n)
	for {
		if len(buf) == cap(buf) {
			buf = slices.Grow(buf, min(max(cap(buf), 512), limit+1-len(buf)))
		}
		m, err := r.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+m]
		if len(buf) > limit {
			return nil, errOverLimit
		}
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			return nil, err
		}
	}
}

// drainBody discards what is left of the request body (up to drainLimit) so the answer
// reaches the client before the connection closes; the connection is closed after the
// answer unless the body ended.
func drainBody(c *fiber.Ctx) {
	stream := c.Request().BodyStream()
	if stream == nil {
		return
	}
	n, err := io.CopyN(io.Discard, stream, drainLimit)
	if err != io.EOF || n >= drainLimit {
		c.Set(fiber.HeaderConnection, "close")
	}
	c.Request().SetBodyRaw(nil)
}

// requestBody returns the request body, reading it now (bounded by the route's limit)
// on a deferred route. Call it only after the route's auth.
func requestBody(c *fiber.Ctx) ([]byte, error) {
	if st, _ := c.Locals(localBody).(*bodyState); st != nil && st.pending {
		if err := readBody(c, st); err != nil {
			return nil, err
		}
	}
	return c.Request().Body(), nil
}

// jsonBody is requestBody for JSON routes: a non-empty body must say it is JSON
// (docs/behaviour.md#conventions: anything else, a cross-site form post for instance, is 415).
func jsonBody(c *fiber.Ctx) ([]byte, error) {
	b, err := requestBody(c)
	if err != nil {
		return nil, err
	}
	if len(bytes.TrimSpace(b)) > 0 && !isJSONType(c.Get(fiber.HeaderContentType)) {
		return nil, &httpError{status: fiber.StatusUnsupportedMediaType, msg: "request body must be JSON (Content-Type: application/json)"}
	}
	return b, nil
}

// isJSONType reports whether a Content-Type names JSON: application/json or
// application/<something>+json, with any parameters.
func isJSONType(ct string) bool {
	if ct == "application/json" { // what nearly every client sends: no parse
		return true
	}
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil {
		return false
	}
	return mt == "application/json" || (strings.HasPrefix(mt, "application/") && strings.HasSuffix(mt, "+json"))
}
