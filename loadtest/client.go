// Package loadtest drives a running Podium server the way real clients do — judges on
// phones, admin dashboards, expo screens and the marketing site — over HTTP and
// websockets only, and reports throughput, latency, broadcast delivery, memory and
// invariant violations. It can also start the server binary itself and SIGKILL it under
// load to check that no acknowledged write is lost. It deliberately imports no server
// package: everything it knows comes from the wire.
package loadtest

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"time"
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
type client struct {
	base     string
	http     *http.Client
	adminHdr string
	stats    *Stats
}

func newHTTPClient(maxConns int, timeout time.Duration) *http.Client {
	tr := &http.Transport{
		Proxy:               nil,
		DialContext:         (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConns:        maxConns,
		MaxIdleConnsPerHost: maxConns,
		IdleConnTimeout:     90 * time.Second,
		DisableCompression:  false,
		ForceAttemptHTTP2:   false,
	}
	return &http.Client{Transport: tr, Timeout: timeout}
}

func newClient(base, adminPassword string, hc *http.Client, st *Stats) *client {
	return &client{
		base:     strings.TrimRight(base, "/"),
		http:     hc,
		adminHdr: "Basic " + base64.StdEncoding.EncodeToString([]byte("admin:"+adminPassword)),
		stats:    st,
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
// a *StatusError; out (if non-nil) receives the decoded JSON of a 2xx answer.
func (c *client) do(ctx context.Context, method, path, route string, a auth, body, out any) error {
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case []byte:
		rd = bytes.NewReader(b)
	default:
		enc, err := json.Marshal(b)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(enc)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, rd)
	if err != nil {
		return err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
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
	resp, err := c.http.Do(req)
	if err != nil {
		if ctx.Err() == nil && c.stats != nil {
			c.stats.record(method+" "+route, 0, time.Since(start))
		}
		return fmt.Errorf("%s %s: %w", method, path, err)
	}
	data, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	d := time.Since(start)
	if err != nil {
		if ctx.Err() == nil && c.stats != nil {
			c.stats.record(method+" "+route, 0, d)
		}
		return fmt.Errorf("%s %s: read body: %w", method, path, err)
	}
	if c.stats != nil {
		c.stats.record(method+" "+route, resp.StatusCode, d)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return &StatusError{Method: method, Path: path, Code: resp.StatusCode, Body: truncate(string(data), 300), RetryAfter: resp.Header.Get("Retry-After")}
	}
	if out != nil {
		switch o := out.(type) {
		case *[]byte:
			*o = data
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
