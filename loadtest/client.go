// Package loadtest drives a running Podium server the way real clients do — judges on
// phones, admin dashboards, expo screens and the marketing site — over HTTP and
// websockets only, and reports throughput, latency, broadcast delivery, memory and
// invariant violations. It can also start the server binary itself and SIGKILL it under
// load to check that no acknowledged write is lost. It deliberately imports no server
// package: everything it knows comes from the wire.
package loadtest

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/valyala/fasthttp"
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

// statusOf returns the HTTP status of err, or 0 for a transport error (no answer).
func statusOf(err error) int {
	var se *StatusError
	if errors.As(err, &se) {
		return se.Code
	}
	return 0
}

// client is an HTTP client bound to one server that records every request in a Stats.
// It uses fasthttp's client (already a dependency through Fiber) because it costs the
// shared CPU a fraction of net/http's per request, leaving more of the machine to the
// server being measured. Non-idempotent requests (POST) are never retried by it.
type client struct {
	base     string
	http     *fasthttp.HostClient
	adminHdr string
	stats    *Stats
	timeout  time.Duration
}

func newHTTPClient(base string, maxConns int, timeout time.Duration) *fasthttp.HostClient {
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

func newClient(base, adminPassword string, hc *fasthttp.HostClient, st *Stats) *client {
	return &client{
		base:     strings.TrimRight(base, "/"),
		http:     hc,
		adminHdr: "Basic " + base64.StdEncoding.EncodeToString([]byte("admin:"+adminPassword)),
		stats:    st,
		timeout:  30 * time.Second,
	}
}

// withStats returns a copy of c recording into st.
func (c *client) withStats(st *Stats) *client {
	cp := *c
	cp.stats = st
	return &cp
}

// auth says how a request authenticates.
type auth struct {
	admin bool
	token string // judge bearer token
	xff   string // X-Forwarded-For (only honoured by servers that trust the peer)
	hdr   map[string]string
}

var (
	asAnon  = auth{}
	asAdmin = auth{admin: true}
)

func asJudge(token string) auth { return auth{token: token} }

// do sends one request; route is the label it is recorded under (a route template).
// body may be nil, []byte (sent as is) or a value encoded as JSON. A non-2xx answer is
// a *StatusError; out (if non-nil) receives the decoded JSON of a 2xx answer (or the
// raw body for a *[]byte). ctx only decides whether a failure is recorded: requests
// themselves are bounded by the client's timeout.
func (c *client) do(ctx context.Context, method, path, route string, a auth, body, out any) error {
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
			return err
		}
		req.SetBody(enc)
		req.Header.SetContentType("application/json")
	}
	switch {
	case a.admin:
		req.Header.Set("Authorization", c.adminHdr)
	case a.token != "":
		req.Header.Set("Authorization", "Bearer "+a.token)
	}
	if a.xff != "" {
		req.Header.Set("X-Forwarded-For", a.xff)
	}
	for k, v := range a.hdr {
		req.Header.Set(k, v)
	}
	start := time.Now()
	err := c.http.DoTimeout(req, resp, c.timeout)
	d := time.Since(start)
	if err != nil {
		if ctx.Err() == nil && c.stats != nil {
			c.stats.record(method+" "+route, 0, d)
		}
		return fmt.Errorf("%s %s: %w", method, path, err)
	}
	code := resp.StatusCode()
	if c.stats != nil {
		c.stats.record(method+" "+route, code, d)
	}
	data := resp.Body()
	if code < 200 || code > 299 {
		return &StatusError{Method: method, Path: path, Code: code, Body: truncate(string(data), 300), RetryAfter: string(resp.Header.Peek("Retry-After"))}
	}
	if out != nil {
		switch o := out.(type) {
		case *[]byte:
			*o = append([]byte(nil), data...)
		default:
			if err := json.Unmarshal(data, out); err != nil {
				return fmt.Errorf("%s %s: decode %q: %w", method, path, truncate(string(data), 200), err)
			}
		}
	}
	return nil
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}

// wire shapes (SPEC §3); only the fields the tool reads.

type wireSeen struct {
	ProjectID string `json:"project_id"`
	Starred   bool   `json:"starred"`
	Notes     string `json:"notes"`
}

type wireJudge struct {
	ID           string     `json:"id"`
	Code         string     `json:"code"`
	Name         string     `json:"name"`
	Email        string     `json:"email"`
	Active       bool       `json:"active"`
	Track        string     `json:"track"`
	Current      *string    `json:"current"`
	Seen         int        `json:"seen"`
	SeenProjects []wireSeen `json:"seen_projects"`
	Rankings     []string   `json:"rankings"`
	LastActivity int64      `json:"last_activity"`
}

type wireProject struct {
	ID           string `json:"id"`
	Name         string `json:"name"`
	Location     int    `json:"location"`
	Seen         int    `json:"seen"`
	Active       bool   `json:"active"`
	LastActivity int64  `json:"last_activity"`
}

type wireFlag struct {
	ID        string `json:"id"`
	ProjectID string `json:"project_id"`
	JudgeID   string `json:"judge_id"`
	Reason    string `json:"reason"`
}

type wireClock struct {
	StartTime int64 `json:"start_time"`
	PauseTime int64 `json:"pause_time"`
	Running   bool  `json:"running"`
}

func (c *client) judgeList(ctx context.Context) ([]wireJudge, error) {
	var out []wireJudge
	err := c.do(ctx, "GET", "/api/judge/list", "/api/judge/list", asAdmin, nil, &out)
	return out, err
}

func (c *client) projectList(ctx context.Context) ([]wireProject, error) {
	var out []wireProject
	err := c.do(ctx, "GET", "/api/project/list", "/api/project/list", asAdmin, nil, &out)
	return out, err
}

func (c *client) flags(ctx context.Context) ([]wireFlag, error) {
	var out []wireFlag
	err := c.do(ctx, "GET", "/api/admin/flags", "/api/admin/flags", asAdmin, nil, &out)
	return out, err
}

// clock sends a clock command (pause|unpause) and returns the clock it answered with.
func (c *client) clock(ctx context.Context, action string) (wireClock, error) {
	var out struct {
		Clock *wireClock `json:"clock"`
	}
	err := c.do(ctx, "POST", "/api/admin/clock/"+action, "/api/admin/clock/"+action, asAdmin, nil, &out)
	if err != nil {
		return wireClock{}, err
	}
	if out.Clock == nil {
		return wireClock{}, fmt.Errorf("clock/%s: answer has no clock", action)
	}
	return *out.Clock, nil
}

// waitReady polls /readyz until it answers 200 or ctx ends.
func (c *client) waitReady(ctx context.Context) error {
	for {
		err := c.do(ctx, "GET", "/readyz", "/readyz", asAnon, nil, nil)
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("server not ready: %w (last: %v)", ctx.Err(), err)
		case <-time.After(50 * time.Millisecond):
		}
	}
}
