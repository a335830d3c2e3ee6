package ratio

import (
	"bytes"
	"sync"
	"sync/atomic"
	"time"

	"github.com/valyala/fasthttp"
)

// ratioSlices is how many alternating slices a round's heartbeat and judge phases are cut into.
const ratioSlices = 4

// heartbeat measures GET /healthz requests per second over conns keep-alive connections.
func heartbeat(hc *fasthttp.HostClient, base string, conns int, d time.Duration) float64 {
	var n atomic.Int64
	stop := time.Now().Add(d)
	var wg sync.WaitGroup
	start := time.Now()
	for i := 0; i < conns; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			req, resp := fasthttp.AcquireRequest(), fasthttp.AcquireResponse()
			defer fasthttp.ReleaseRequest(req)
			defer fasthttp.ReleaseResponse(resp)
			req.SetRequestURI(base + "/healthz")
			for time.Now().Before(stop) {
				if hc.DoTimeout(req, resp, 10*time.Second) == nil && resp.StatusCode() == 200 {
					n.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	return float64(n.Load()) / time.Since(start).Seconds()
}

// judgeActions runs every judge's next → finish loop and returns the acknowledged
// (journaled) actions per second, next and finish each counting one, and how many
// judges ran out of projects.
func judgeActions(hc *fasthttp.HostClient, base string, tokens []string, d time.Duration) (float64, int) {
	var n atomic.Int64
	var out atomic.Int64
	stop := time.Now().Add(d)
	var wg sync.WaitGroup
	start := time.Now()
	for _, tok := range tokens {
		wg.Add(1)
		go func() {
			defer wg.Done()
			bearer := "Bearer " + tok
			next, fin := fasthttp.AcquireRequest(), fasthttp.AcquireRequest()
			resp := fasthttp.AcquireResponse()
			defer fasthttp.ReleaseRequest(next)
			defer fasthttp.ReleaseRequest(fin)
			defer fasthttp.ReleaseResponse(resp)
			for _, req := range []*fasthttp.Request{next, fin} {
				req.Header.SetMethod("POST")
				req.Header.Set("Authorization", bearer)
				req.Header.SetContentType("application/json")
			}
			next.SetRequestURI(base + "/api/judge/next")
			fin.SetRequestURI(base + "/api/judge/finish")
			fin.SetBodyString(`{"notes":"ok"}`)
			for time.Now().Before(stop) {
				if hc.DoTimeout(next, resp, 10*time.Second) != nil || resp.StatusCode() != 200 {
					continue
				}
				if !hasProjectID(resp.Body()) {
					out.Add(1)
					return
				}
				n.Add(1)
				if hc.DoTimeout(fin, resp, 10*time.Second) == nil && resp.StatusCode() == 200 {
					n.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	return float64(n.Load()) / time.Since(start).Seconds(), int(out.Load())
}

// hasProjectID reports whether a next answer names a project (a non-empty
// "project_id"), without decoding it: the load generator's CPU is shared with the
// server's, and a reflective decode per action would be counted against judge actions.
func hasProjectID(body []byte) bool {
	const key = `"project_id":"`
	i := bytes.Index(body, []byte(key))
	return i >= 0 && i+len(key) < len(body) && body[i+len(key)] != '"'
}
