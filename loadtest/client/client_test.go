package client

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"podium/loadtest/stats"
)

func TestDoAuthenticatesDecodesAndRecords(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/api/judge/list":
			if u, p, ok := r.BasicAuth(); !ok || u != "admin" || p != "pw" {
				http.Error(w, "no", http.StatusUnauthorized)
				return
			}
			_, _ = w.Write([]byte(`[{"id":"j1","name":"Ada","seen_projects":[{"project_id":"p1","starred":true}]}]`))
		case "/api/judge/next":
			if r.Header.Get("Authorization") != "Bearer tok" || r.Header.Get("X-Forwarded-For") != "10.0.0.1" {
				http.Error(w, "no", http.StatusUnauthorized)
				return
			}
			w.Header().Set("Retry-After", "3")
			http.Error(w, "slow down", http.StatusTooManyRequests)
		}
	}))
	defer srv.Close()
	st := stats.NewRoutes()
	c := New(srv.URL, "pw", NewHostClient(srv.URL, 4, 5*time.Second), st)
	js, err := c.JudgeList(context.Background())
	if err != nil || len(js) != 1 || js[0].Name != "Ada" || !js[0].SeenProjects[0].Starred {
		t.Fatalf("judge list: %+v %v", js, err)
	}
	err = c.Do(context.Background(), "POST", "/api/judge/next", "/api/judge/next", Auth{Token: "tok", XFF: "10.0.0.1"}, nil, nil)
	var se *StatusError
	if !errors.As(err, &se) || Status(err) != 429 || se.RetryAfter != "3" {
		t.Fatalf("want a 429 with Retry-After 3, got %v", err)
	}
	if Status(errors.New("connection refused")) != 0 {
		t.Fatal("a transport error has no status")
	}
	if st.Answers("GET /api/judge/list", 200) != 1 || st.Answers("POST /api/judge/next", 429) != 1 {
		t.Fatalf("requests not recorded: %+v", st)
	}
	if c.WithStats(nil).Stats() != nil || c.Stats() != st {
		t.Fatal("WithStats must copy the client")
	}
}

func TestParallelStopsAtFirstError(t *testing.T) {
	var ran atomic.Int64
	boom := errors.New("boom")
	err := Parallel(1000, 4, func(i int) error {
		ran.Add(1)
		if i == 10 {
			return boom
		}
		return nil
	})
	if !errors.Is(err, boom) || ran.Load() >= 1000 {
		t.Fatalf("err %v after %d calls", err, ran.Load())
	}
	if err := Parallel(50, 8, func(int) error { ran.Add(1); return nil }); err != nil {
		t.Fatal(err)
	}
}

func TestFakeIPAndRunID(t *testing.T) {
	if FakeIP(0) != "10.0.0.0" || FakeIP(65793) != "10.1.1.1" {
		t.Fatalf("FakeIP: %s %s", FakeIP(0), FakeIP(65793))
	}
	if a, b := RunID(), RunID(); len(a) != 8 || a == b {
		t.Fatalf("RunID: %q %q", a, b)
	}
}
