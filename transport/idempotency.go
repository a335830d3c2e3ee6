package transport

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"

	"github.com/gofiber/fiber/v2"

	"podium/engine"
)

// Idempotent judge writes (docs/behaviour.md#on-the-floor): a judge write with an
// Idempotency-Key carries the key and a fingerprint of the request into its command's
// envelope; the engine answers a repeat from the kept answer (engine.Replayed, sent
// with Idempotent-Replayed: true) and refuses the key for another request (422).

const (
	headerIdempotencyKey = "Idempotency-Key"
	headerReplayed       = "Idempotent-Replayed"
	keyedLocal           = "podium.keyed"
)

// keyed reads the request's Idempotency-Key (none: the write behaves as without one).
// It runs after judgeAuth, on the judge's write routes only.
func (s *Server) keyed(c *fiber.Ctx) error {
	raw := c.Request().Header.Peek(headerIdempotencyKey)
	if raw == nil {
		return c.Next()
	}
	if !engine.ValidKey(string(raw)) {
		return badRequest("Idempotency-Key must be 1 to 255 visible ASCII characters")
	}
	h := sha256.New()
	h.Write([]byte(c.Method()))
	h.Write([]byte{0})
	h.Write([]byte(c.Path()))
	h.Write([]byte{0})
	h.Write(c.Body())
	c.Locals(keyedLocal, &engine.Keyed{Key: strings.Clone(string(raw)), Request: hex.EncodeToString(h.Sum(nil)[:16])})
	return c.Next()
}

// keyOf returns the request's key for its command (a fresh copy: the engine fills in
// the answer), or nil.
func keyOf(c *fiber.Ctx) *engine.Keyed {
	k, ok := c.Locals(keyedLocal).(*engine.Keyed)
	if !ok {
		return nil
	}
	cp := *k
	return &cp
}

// sendReplayed answers a repeated request with the answer kept for its key.
func sendReplayed(c *fiber.Ctx, r *engine.Replayed) error {
	c.Set(headerReplayed, "true")
	c.Set(fiber.HeaderContentType, fiber.MIMEApplicationJSON)
	return c.Status(r.Status).Send(r.Body)
}
