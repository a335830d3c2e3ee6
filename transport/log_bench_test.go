package transport

import (
	"net"
	"os"
	"testing"

	"github.com/rs/zerolog"
	"github.com/valyala/fasthttp"

	"podium/persist"
)

// BenchmarkRequestLogCost runs a cheap successful request (GET /api/admin/started, a
// heartbeat's size) through the handler chain in process with a JSON logger at debug
// (a line per request, as every request had before) and at info (the default: no line
// for a quick success).
//
//	go test ./transport -run '^$' -bench RequestLogCost -count 3
func BenchmarkRequestLogCost(b *testing.B) {
	for _, level := range []zerolog.Level{zerolog.DebugLevel, zerolog.InfoLevel} {
		b.Run(level.String(), func(b *testing.B) {
			node, err := persist.Open(b.TempDir(), persist.Options{Log: zerolog.Nop()})
			if err != nil {
				b.Fatal(err)
			}
			defer node.Close()
			out, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0) // a file, like stdout: one write(2) per line
			if err != nil {
				b.Fatal(err)
			}
			defer out.Close()
			srv := New(Config{AdminPassword: testPassword}, node, zerolog.New(out).Level(level).With().Timestamp().Logger())
			handler := srv.app.Handler()
			remote := &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 40000}
			b.ReportAllocs()
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				var req fasthttp.Request
				var ctx fasthttp.RequestCtx
				req.SetRequestURI("/api/admin/started")
				for pb.Next() {
					ctx.Response.Reset()
					ctx.Init(&req, remote, nil)
					handler(&ctx)
					if ctx.Response.StatusCode() != 200 {
						b.Fatalf("status %d", ctx.Response.StatusCode())
					}
				}
			})
		})
	}
}
