// Package stats collects the latencies and status codes of a load generator's requests
// per route and summarises them as nearest-rank percentiles in milliseconds.
package stats

import (
	"math"
	"sort"
	"strconv"
	"sync"
	"time"
)

// Routes collects request latencies and status codes per route.
type Routes struct {
	mu     sync.Mutex
	routes map[string]*routeStats
	// per-second timeline of the routes accepted by tlKeep, from tlStart
	tlStart time.Time
	tlKeep  func(route string) bool
	tl      map[int]*Second
}

// Second is one second of the measured phase: requests completed in it and the slowest.
type Second struct {
	At    int     `json:"at"` // seconds since the phase started
	Count int     `json:"count"`
	MaxMs float64 `json:"max_ms"`
}

// StartTimeline starts counting completions per second for the routes keep accepts.
func (s *Routes) StartTimeline(start time.Time, keep func(string) bool) {
	s.mu.Lock()
	s.tlStart, s.tlKeep, s.tl = start, keep, map[int]*Second{}
	s.mu.Unlock()
}

// Timeline returns one entry per second of the phase (zero counts included).
func (s *Routes) Timeline(elapsed time.Duration) []Second {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := int(elapsed / time.Second)
	out := make([]Second, 0, n+1)
	for i := 0; i <= n; i++ {
		if b := s.tl[i]; b != nil {
			out = append(out, *b)
		} else {
			out = append(out, Second{At: i})
		}
	}
	return out
}

type routeStats struct {
	lat   []time.Duration
	codes map[int]int
}

// NewRoutes returns an empty collector.
func NewRoutes() *Routes { return &Routes{routes: map[string]*routeStats{}} }

// Record adds one request; code 0 means no answer (connection error or timeout).
func (s *Routes) Record(route string, code int, d time.Duration) {
	s.mu.Lock()
	r := s.routes[route]
	if r == nil {
		r = &routeStats{codes: map[int]int{}}
		s.routes[route] = r
	}
	r.lat = append(r.lat, d)
	r.codes[code]++
	if s.tl != nil && s.tlKeep(route) {
		at := int(time.Since(s.tlStart) / time.Second)
		b := s.tl[at]
		if b == nil {
			b = &Second{At: at}
			s.tl[at] = b
		}
		b.Count++
		if m := ms(d); m > b.MaxMs {
			b.MaxMs = m
		}
	}
	s.mu.Unlock()
}

// Route is one route's line in the report. Latencies are milliseconds.
type Route struct {
	Route     string         `json:"route"`
	Count     int            `json:"count"`
	PerSecond float64        `json:"per_second"`
	P50       float64        `json:"p50_ms"`
	P95       float64        `json:"p95_ms"`
	P99       float64        `json:"p99_ms"`
	Max       float64        `json:"max_ms"`
	Errors    map[string]int `json:"errors"` // status ("0" = no answer) -> count, non-2xx only
}

// Latency summarises a set of durations in milliseconds.
type Latency struct {
	Count int     `json:"count"`
	P50   float64 `json:"p50_ms"`
	P95   float64 `json:"p95_ms"`
	P99   float64 `json:"p99_ms"`
	Max   float64 `json:"max_ms"`
}

// Summarize returns the count, nearest-rank percentiles and maximum of d.
func Summarize(d []time.Duration) Latency {
	if len(d) == 0 {
		return Latency{}
	}
	s := append([]time.Duration(nil), d...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return Latency{Count: len(s), P50: pct(s, 0.50), P95: pct(s, 0.95), P99: pct(s, 0.99), Max: ms(s[len(s)-1])}
}

// pct is the nearest-rank percentile of sorted durations, in milliseconds.
func pct(sorted []time.Duration, q float64) float64 {
	i := int(math.Ceil(q*float64(len(sorted)))) - 1
	if i < 0 {
		i = 0
	}
	return ms(sorted[i])
}

func ms(d time.Duration) float64 { return math.Round(float64(d)/1e3) / 1e3 }

// Report returns per-route lines sorted by route, and total errors by status.
func (s *Routes) Report(elapsed time.Duration) ([]Route, map[string]int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	names := make([]string, 0, len(s.routes))
	for n := range s.routes {
		names = append(names, n)
	}
	sort.Strings(names)
	out := make([]Route, 0, len(names))
	total := map[string]int{}
	for _, n := range names {
		r := s.routes[n]
		l := Summarize(r.lat)
		rr := Route{Route: n, Count: l.Count, P50: l.P50, P95: l.P95, P99: l.P99, Max: l.Max, Errors: map[string]int{}}
		if elapsed > 0 {
			rr.PerSecond = math.Round(float64(l.Count)/elapsed.Seconds()*10) / 10
		}
		for code, k := range r.codes {
			if code >= 200 && code <= 299 {
				continue
			}
			key := strconv.Itoa(code)
			rr.Errors[key] += k
			total[key] += k
		}
		out = append(out, rr)
	}
	return out, total
}

// Latencies returns the merged latencies of the routes accepted by keep.
func (s *Routes) Latencies(keep func(route string) bool) []time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	var all []time.Duration
	for n, r := range s.routes {
		if keep(n) {
			all = append(all, r.lat...)
		}
	}
	return all
}

// Answers returns how many requests of route were answered with code.
func (s *Routes) Answers(route string, code int) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if r := s.routes[route]; r != nil {
		return r.codes[code]
	}
	return 0
}
