// Package client is Podium's HTTP API as the load tools see it: a client bound to one
// server that records every request's latency and status, the wire shapes the tools
// read, and the setup calls that create projects and judges and log judges in. It
// deliberately imports no server package: everything it knows comes from the wire.
package client

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/valyala/fasthttp"

	"podium/loadtest/stats"
)

// StatusError is a non-2xx answer from the server.
type StatusError struct {
	Method, Path string
	Code         int
	Body         string
	RetryAfter   string // Retry-After header, if any
}

// Error describes the answer.
func (e *StatusError) Error() string {
	return fmt.Sprintf("%s %s: %d %s", e.Method, e.Path, e.Code, strings.TrimSpace(e.Body))
}

// Status returns the HTTP status of err, or 0 for a transport error (no answer).
func Status(err error) int {
	var se *StatusError
	if errors.As(err, &se) {
		return se.Code
	}
	return 0
}

// Client is an HTTP client bound to one server that records every request in a stats.Routes.
// It uses fasthttp's client (already a dependency through Fiber) because it costs the
// shared CPU a fraction of net/http's per request, leaving more of the machine to the
// server being measured. Non-idempotent requests (POST) are never retried by it.
type Client struct {
	base     string
	http     *fasthttp.HostClient
	adminHdr string
	stats    *stats.Routes
	timeout  time.Duration
}

// NewHostClient returns a fasthttp client for base's host with up to maxConns
// connections and timeout for connecting, reading and writing.
func NewHostClient(base string, maxConns int, timeout time.Duration) *fasthttp.HostClient {
	addr := strings.TrimPrefix(strings.TrimPrefix(base, "http://"), "https://")
	if i := strings.IndexByte(addr, '/'); i >= 0 {
		addr = addr[:i]
	}
	return &fasthttp.HostClient{
		Addr:                          addr,
		IsTLS:                         strings.HasPrefix(base, "https://"),
		MaxConns:                      maxConns,
		MaxConnWaitTimeout:            timeout,
		MaxIdleConnDuration:           90 * time.Second,
		ReadTimeout:                   timeout,
		WriteTimeout:                  timeout,
		NoDefaultUserAgentHeader:      true,
		DisableHeaderNamesNormalizing: false,
		DisablePathNormalizing:        true,
		MaxResponseBodySize:           256 << 20,
	}
}

// New returns a client for base over hc that authenticates as the admin with
// adminPassword and records into st (nil: nowhere).
func New(base, adminPassword string, hc *fasthttp.HostClient, st *stats.Routes) *Client {
	return &Client{
		base:     strings.TrimRight(base, "/"),
		http:     hc,
		adminHdr: "Basic " + base64.StdEncoding.EncodeToString([]byte("admin:"+adminPassword)),
		stats:    st,
		timeout:  30 * time.Second,
	}
}

// WithStats returns a copy of c recording into st.
func (c *Client) WithStats(st *stats.Routes) *Client {
	cp := *c
	cp.stats = st
	return &cp
}

// Auth says how a request authenticates, and with which extra headers.
type Auth struct {
	Admin  bool
	Token  string // judge bearer token
	XFF    string // X-Forwarded-For (only honoured by servers that trust the peer)
	Header map[string]string
}

// AsAnon and AsAdmin are the anonymous and the admin's authentication.
var (
	AsAnon  = Auth{}
	AsAdmin = Auth{Admin: true}
)

// AsJudge authenticates as the judge holding the bearer token.
func AsJudge(token string) Auth { return Auth{Token: token} }

// Do sends one request; route is the label it is recorded under (a route template).
// body may be nil, []byte (sent as is) or a value encoded as JSON. A non-2xx answer is
// a *StatusError; out (if non-nil) receives the decoded JSON of a 2xx answer (or the
// raw body for a *[]byte). ctx only decides whether a failure is recorded: requests
// themselves are bounded by the client's timeout.
func (c *Client) Do(ctx context.Context, method, path, route string, a Auth, body, out any) error {
	_, err := c.do(ctx, method, path, route, a, body, out)
	return err
}

// DoKeyed is Do for a judge's write with an Idempotency-Key (key); replayed reports
// whether the server answered it from the kept answer (Idempotent-Replayed: true).
func (c *Client) DoKeyed(ctx context.Context, method, path, route string, a Auth, key string, body, out any) (replayed bool, err error) {
	h := make(map[string]string, len(a.Header)+1)
	for k, v := range a.Header {
		h[k] = v
	}
	h["Idempotency-Key"] = key
	a.Header = h
	return c.do(ctx, method, path, route, a, body, out)
}

func (c *Client) do(ctx context.Context, method, path, route string, a Auth, body, out any) (replayed bool, err error) {
	req := fasthttp.AcquireRequest()
	resp := fasthttp.AcquireResponse()
	defer fasthttp.ReleaseRequest(req)
	defer fasthttp.ReleaseResponse(resp)
	req.SetRequestURI(c.base + path)
	req.Header.SetMethod(method)
	switch b := body.(type) {
	case nil:
	case []byte:
		req.SetBody(b)
		req.Header.SetContentType("application/json")
	default:
		enc, err := json.Marshal(b)
		if err != nil {
			return false, err
		}
		req.SetBody(enc)
		req.Header.SetContentType("application/json")
	}
	switch {
	case a.Admin:
		req.Header.Set("Authorization", c.adminHdr)
	case a.Token != "":
		req.Header.Set("Authorization", "Bearer "+a.Token)
	}
	if a.XFF != "" {
		req.Header.Set("X-Forwarded-For", a.XFF)
	}
	for k, v := range a.Header {
		req.Header.Set(k, v)
	}
	start := time.Now()
	err = c.http.DoTimeout(req, resp, c.timeout)
	d := time.Since(start)
	if err != nil {
		if ctx.Err() == nil && c.stats != nil {
			c.stats.Record(method+" "+route, 0, d)
		}
		return false, fmt.Errorf("%s %s: %w", method, path, err)
	}
	code := resp.StatusCode()
	replayed = string(resp.Header.Peek("Idempotent-Replayed")) == "true"
	if c.stats != nil {
		c.stats.Record(method+" "+route, code, d)
	}
	data := resp.Body()
	if code < 200 || code > 299 {
		return replayed, &StatusError{Method: method, Path: path, Code: code, Body: truncate(string(data), 300), RetryAfter: string(resp.Header.Peek("Retry-After"))}
	}
	if out != nil {
		switch o := out.(type) {
		case *[]byte:
			*o = append([]byte(nil), data...)
		default:
			if err := json.Unmarshal(data, out); err != nil {
				return replayed, fmt.Errorf("%s %s: decode %q: %w", method, path, truncate(string(data), 200), err)
			}
		}
	}
	return replayed, nil
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}

// Base is the server's base URL.
func (c *Client) Base() string { return c.base }

// Stats is where c records its requests (nil: nowhere).
func (c *Client) Stats() *stats.Routes { return c.stats }

// CloseIdle closes the idle keep-alive connections (they hold up a server's shutdown).
func (c *Client) CloseIdle() { c.http.CloseIdleConnections() }
