package transport

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"io"
	"net/http"
	"sort"
	"sync"
	"testing"
	"time"
)

// BenchmarkAdminWriteRoundTrip measures an admin write over real HTTP (POST
// /api/project/new: parse, auth, apply, journal fsync, response), reporting p50/p99,
// with 1 and 16 concurrent clients.
//
//	go test ./transport -run '^$' -bench AdminWriteRoundTrip -benchtime 2000x
func BenchmarkAdminWriteRoundTrip(b *testing.B) {
	for _, clients := range []int{1, 16} {
		b.Run(fmt.Sprintf("clients=%d", clients), func(b *testing.B) {
			t := &testing.T{}
			ts := startServerIn(t, b.TempDir())
			defer ts.Stop()
			authz := "Basic " + base64.StdEncoding.EncodeToString([]byte("admin:"+testPassword))
			client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: clients}}
			lat := make([]time.Duration, b.N)
			var mu sync.Mutex
			next := 0
			b.ResetTimer()
			var wg sync.WaitGroup
			for c := 0; c < clients; c++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for {
						mu.Lock()
						i := next
						next++
						mu.Unlock()
						if i >= b.N {
							return
						}
						body := []byte(fmt.Sprintf(`{"name":"bench %d","description":"d","challenge_list":"AI"}`, i))
						req, _ := http.NewRequest("POST", ts.URL+"/api/project/new", bytes.NewReader(body))
						req.Header.Set("Authorization", authz)
						req.Header.Set("Content-Type", "application/json")
						t0 := time.Now()
						resp, err := client.Do(req)
						if err != nil {
							b.Error(err)
							return
						}
						io.Copy(io.Discard, resp.Body)
						resp.Body.Close()
						lat[i] = time.Since(t0)
						if resp.StatusCode != 200 {
							b.Errorf("status %d", resp.StatusCode)
							return
						}
					}
				}()
			}
			wg.Wait()
			b.StopTimer()
			sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
			b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
			b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "req/s")
		})
	}
}
