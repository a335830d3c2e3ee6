package transport

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/gofiber/fiber/v2"

	"podium/engine"
)

// httpError is a refusal decided in transport (auth, throttling, parsing).
type httpError struct {
	status     int
	msg        string
	retryAfter int // seconds, for 429
}

func (e *httpError) Error() string { return e.msg }

func badRequest(format string, a ...any) error {
	return &httpError{status: fiber.StatusBadRequest, msg: fmt.Sprintf(format, a...)}
}

func notFound(format string, a ...any) error {
	return &httpError{status: fiber.StatusNotFound, msg: fmt.Sprintf(format, a...)}
}

var errUnauthorized = &httpError{status: fiber.StatusUnauthorized, msg: "unauthorized"}

// handleError maps every error to its status and {"error": ...} body. It is the one
// place where errors become status codes.
func (s *Server) handleError(c *fiber.Ctx, err error) error {
	status, msg := fiber.StatusInternalServerError, "internal error"
	var he *httpError
	var ee *engine.Error
	var fe *fiber.Error
	var rp *engine.Replayed
	switch {
	case errors.As(err, &rp):
		return sendReplayed(c, rp)
	case errors.As(err, &he):
		status, msg = he.status, he.msg
		if he.retryAfter > 0 {
			c.Set(fiber.HeaderRetryAfter, fmt.Sprint(he.retryAfter))
		}
	case errors.As(err, &ee):
		msg = ee.Msg
		switch ee.Kind {
		case engine.KindInvalid:
			status = fiber.StatusBadRequest
		case engine.KindUnauthorized:
			status = fiber.StatusUnauthorized
		case engine.KindNotFound:
			status = fiber.StatusNotFound
		case engine.KindConflict:
			status = fiber.StatusConflict
		case engine.KindUnprocessable:
			status = fiber.StatusUnprocessableEntity
		}
	case errors.Is(err, engine.ErrNoLeader):
		c.Set(fiber.HeaderRetryAfter, "1")
		status, msg = fiber.StatusServiceUnavailable, err.Error()
	case errors.Is(err, engine.ErrReadOnly), errors.Is(err, engine.ErrClosed):
		status, msg = fiber.StatusServiceUnavailable, err.Error()
	case errors.As(err, &fe):
		status = fe.Code
		switch status {
		case fiber.StatusNotFound:
			msg = "not found"
		case fiber.StatusMethodNotAllowed:
			msg = "method not allowed"
		case fiber.StatusRequestEntityTooLarge:
			msg = "request body too large"
		default:
			msg = fe.Message
		}
		if status >= 500 {
			s.log.Error().Err(err).Msg("request failed")
		}
	default:
		s.log.Error().Err(err).Str("route", c.Route().Path).Msg("request failed")
	}
	c.Set(fiber.HeaderContentType, fiber.MIMEApplicationJSONCharsetUTF8)
	return c.Status(status).JSON(fiber.Map{"error": msg})
}

var okBody = []byte(`{"ok":1}`)

// ok answers {"ok":1}.
func ok(c *fiber.Ctx) error {
	c.Set(fiber.HeaderContentType, fiber.MIMEApplicationJSON)
	return c.Send(okBody)
}

var okZeroBody = []byte(`{"ok":0}`)

// okFlag answers {"ok":1} or {"ok":0}.
func okFlag(c *fiber.Ctx, v bool) error {
	if v {
		return ok(c)
	}
	return sendJSON(c, okZeroBody)
}

// sendJSON answers with b, already encoded JSON (hot routes encode by hand instead of
// by reflection).
func sendJSON(c *fiber.Ctx, b []byte) error {
	c.Set(fiber.HeaderContentType, fiber.MIMEApplicationJSON)
	return c.Send(b)
}

// appendJSONString appends s as a JSON string (as encoding/json would, HTML-safe).
func appendJSONString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if ch := s[i]; ch < 0x20 || ch >= 0x7f || ch == '"' || ch == '\\' || ch == '<' || ch == '>' || ch == '&' {
			q, _ := json.Marshal(s)
			return append(b, q...)
		}
	}
	return append(append(append(b, '"'), s...), '"')
}

// bindJSON decodes the request body into v. An empty body is an error unless optional
// (then v keeps its zero value, as if the body were {}).
func bindJSON(c *fiber.Ctx, v any, optional bool) error {
	body, err := jsonBody(c)
	if err != nil {
		return err
	}
	return decodeJSON(body, v, optional)
}

// decodeJSON is bindJSON on a body already read. A JSON null is not an object: 400.
func decodeJSON(body []byte, v any, optional bool) error {
	trimmed := bytes.TrimSpace(body)
	if string(trimmed) == "null" {
		return badRequest("request body has the wrong type (want a JSON object)")
	}
	if len(trimmed) == 0 {
		if optional {
			return nil
		}
		return badRequest("request body is required")
	}
	if err := json.Unmarshal(body, v); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			if te.Field != "" {
				return badRequest("field %q has the wrong type (want %s)", te.Field, te.Type)
			}
			return badRequest("request body has the wrong type (want a JSON object)")
		}
		return badRequest("invalid JSON body")
	}
	return nil
}

// need reports a missing required field.
func need(field string, present bool) error {
	if !present {
		return badRequest("field %q is required", field)
	}
	return nil
}

// paramID parses the :name path parameter as an id (400 when malformed).
func paramID(c *fiber.Ctx, name string) (engine.ID, error) {
	id, err := engine.ParseID(c.Params(name))
	if err != nil {
		return id, badRequest("invalid id %q: want 24 lowercase hex characters", c.Params(name))
	}
	return id, nil
}

// parseIDs parses a list of ids from a request body.
func parseIDs(items []string) ([]engine.ID, error) {
	out := make([]engine.ID, 0, len(items))
	for _, it := range items {
		id, err := engine.ParseID(it)
		if err != nil {
			return nil, badRequest("invalid id %q: want 24 lowercase hex characters", it)
		}
		out = append(out, id)
	}
	return out, nil
}

// submit runs a command for the request's actor.
func (s *Server) submit(c *fiber.Ctx, cmd engine.Command) (any, error) {
	if k := keyOf(c); k != nil {
		return s.node.SubmitKeyed(c.UserContext(), actorOf(c), cmd, k)
	}
	return s.node.Submit(c.UserContext(), actorOf(c), cmd)
}

// submitOK runs a command and answers {"ok":1}.
func (s *Server) submitOK(c *fiber.Ctx, cmd engine.Command) error {
	if _, err := s.submit(c, cmd); err != nil {
		return err
	}
	return ok(c)
}
