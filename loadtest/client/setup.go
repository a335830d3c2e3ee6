package client

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"mime/multipart"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Parallel runs fn(i) for i in [0, n) on workers goroutines and returns the first error.
func Parallel(n, workers int, fn func(i int) error) error {
	var next atomic.Int64
	var first atomic.Value
	var wg sync.WaitGroup
	for w := 0; w < workers && w < n; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= n || first.Load() != nil {
					return
				}
				if err := fn(i); err != nil {
					first.CompareAndSwap(nil, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	if err, _ := first.Load().(error); err != nil {
		return err
	}
	return nil
}

// RaiseLoginLimit lifts the per-IP judge login throttle so that hundreds of judges can
// log in from one load generator. It tries POST /api/admin/max-reqs, then
// POST /api/admin/options; it returns a note when neither exists.
func (c *Client) RaiseLoginLimit(ctx context.Context) string {
	body := map[string]any{"max_req_per_min": 100000}
	err := c.Do(ctx, "POST", "/api/admin/max-reqs", "/api/admin/max-reqs", AsAdmin, body, nil)
	if err == nil {
		return ""
	}
	if err2 := c.Do(ctx, "POST", "/api/admin/options", "/api/admin/options", AsAdmin, body, nil); err2 == nil {
		return ""
	}
	return "could not raise max_req_per_min (" + err.Error() + "); judge logins may be throttled (429, retried after Retry-After)"
}

func multipartCSV(fields map[string]string, csv string) ([]byte, string, error) {
	var buf bytes.Buffer
	w := multipart.NewWriter(&buf)
	for k, v := range fields {
		if err := w.WriteField(k, v); err != nil {
			return nil, "", err
		}
	}
	fw, err := w.CreateFormFile("csv", "import.csv")
	if err != nil {
		return nil, "", err
	}
	if _, err := fw.Write([]byte(csv)); err != nil {
		return nil, "", err
	}
	if err := w.Close(); err != nil {
		return nil, "", err
	}
	return buf.Bytes(), w.FormDataContentType(), nil
}

// importCSV posts a CSV import; ok false means the route does not exist (404/405).
func (c *Client) importCSV(ctx context.Context, path string, fields map[string]string, csv string) (bool, error) {
	body, ctype, err := multipartCSV(fields, csv)
	if err != nil {
		return false, err
	}
	err = c.Do(ctx, "POST", path, path, Auth{Admin: true, Header: map[string]string{"Content-Type": ctype}}, body, nil)
	if code := Status(err); code == 404 || code == 405 {
		return false, nil
	}
	return err == nil, err
}

// CreateProjects adds n projects named "<prefix>-p<i>" (i from from), through the CSV
// import when csv is set and the server has it, else one by one on workers goroutines,
// and returns the projects the server acknowledged.
func (c *Client) CreateProjects(ctx context.Context, prefix string, from, n, workers int, csv bool) ([]Project, error) {
	name := func(i int) string { return fmt.Sprintf("%s-p%05d", prefix, i) }
	if csv && n > 1 {
		var sb strings.Builder
		for i := from; i < from+n; i++ {
			fmt.Fprintf(&sb, "%s,Demo of project %d,https://example.com/p/%d\n", name(i), i, i)
		}
		ok, err := c.importCSV(ctx, "/api/project/csv", map[string]string{"hasHeader": "false"}, sb.String())
		if err != nil {
			return nil, fmt.Errorf("project CSV import: %w", err)
		}
		if ok {
			list, err := c.ProjectList(ctx)
			if err != nil {
				return nil, err
			}
			want := map[string]bool{}
			for i := from; i < from+n; i++ {
				want[name(i)] = true
			}
			var made []Project
			for _, p := range list {
				if want[p.Name] {
					made = append(made, p)
				}
			}
			return made, nil
		}
	}
	var mu sync.Mutex
	var made []Project
	err := Parallel(n, workers, func(k int) error {
		i := from + k
		var out struct {
			ID string `json:"id"`
		}
		body := map[string]any{"name": name(i), "description": fmt.Sprintf("Demo of project %d", i), "url": fmt.Sprintf("https://example.com/p/%d", i)}
		if err := c.Do(ctx, "POST", "/api/project/new", "/api/project/new", AsAdmin, body, &out); err != nil {
			return err
		}
		mu.Lock()
		made = append(made, Project{ID: out.ID, Name: name(i)})
		mu.Unlock()
		return nil
	})
	return made, err
}

// CreateJudges adds n judges named "<prefix>-j<i>" (i from from; no emails sent), the
// same way as CreateProjects, and returns them in that order with their login codes.
func (c *Client) CreateJudges(ctx context.Context, prefix string, from, n, workers int, csv bool) ([]Judge, error) {
	name := func(i int) string { return fmt.Sprintf("%s-j%05d", prefix, i) }
	email := func(i int) string { return fmt.Sprintf("%s-j%05d@example.com", prefix, i) }
	imported := false
	if csv && n > 1 {
		var sb strings.Builder
		for i := from; i < from+n; i++ {
			fmt.Fprintf(&sb, "%s,%s\n", name(i), email(i))
		}
		ok, err := c.importCSV(ctx, "/api/judge/csv", map[string]string{"hasHeader": "false", "noSend": "true"}, sb.String())
		if err != nil {
			return nil, fmt.Errorf("judge CSV import: %w", err)
		}
		imported = ok
	}
	if !imported {
		err := Parallel(n, workers, func(k int) error {
			i := from + k
			body := map[string]any{"name": name(i), "email": email(i), "notes": "load test", "no_send": true}
			return c.Do(ctx, "POST", "/api/judge/new", "/api/judge/new", AsAdmin, body, nil)
		})
		if err != nil {
			return nil, err
		}
	}
	list, err := c.JudgeList(ctx)
	if err != nil {
		return nil, err
	}
	byEmail := map[string]Judge{}
	for _, j := range list {
		byEmail[j.Email] = j
	}
	made := make([]Judge, 0, n)
	for i := from; i < from+n; i++ {
		j, ok := byEmail[email(i)]
		if !ok {
			return nil, fmt.Errorf("judge %s was acknowledged but is not in /api/judge/list", email(i))
		}
		made = append(made, j)
	}
	return made, nil
}

// FakeIP gives every judge its own X-Forwarded-For address, so that a server started
// with TRUSTED_PROXIES=127.0.0.1 throttles logins per judge rather than per load
// generator. Servers that do not trust the peer ignore the header.
func FakeIP(i int) string {
	return fmt.Sprintf("10.%d.%d.%d", (i>>16)&255, (i>>8)&255, i&255)
}

// Login logs the judge with code in from the address xff (see FakeIP) and returns its
// bearer token, waiting out throttling (429 + Retry-After) up to a few times.
func (c *Client) Login(ctx context.Context, code, xff string) (string, error) {
	for attempt := 0; ; attempt++ {
		var out struct {
			Token string `json:"token"`
		}
		err := c.Do(ctx, "POST", "/api/judge/login", "/api/judge/login", Auth{XFF: xff}, map[string]string{"code": code}, &out)
		if err == nil {
			if out.Token == "" {
				return "", fmt.Errorf("judge login: empty token")
			}
			return out.Token, nil
		}
		if Status(err) != 429 || attempt >= 3 {
			return "", err
		}
		wait := 5 * time.Second
		var se *StatusError
		if errors.As(err, &se) {
			wait = time.Duration(atoiDefault(se.RetryAfter, 5)) * time.Second
		}
		select {
		case <-ctx.Done():
			return "", ctx.Err()
		case <-time.After(wait):
		}
	}
}

func atoiDefault(s string, def int) int {
	if n, err := strconv.Atoi(strings.TrimSpace(s)); err == nil {
		return n
	}
	return def
}

// RunID returns 8 random hex digits that make the names and emails of one run unique
// on a server that already has data.
func RunID() string {
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
