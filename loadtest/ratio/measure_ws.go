package ratio

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"path/filepath"
	"regexp"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fasthttp/websocket"
	"github.com/valyala/fasthttp"

	"podium/loadtest/client"
	"podium/loadtest/server"
	"podium/loadtest/stats"
)

const wsPerSourceIP = 250

// wsMeasure is one side's websocket figures in one round.
type wsMeasure struct {
	kib      float64 // RSS per idle socket (KiB)
	p50, p99 float64 // broadcast delivery from the trigger request (ms)
	cpuUS    float64 // server CPU per delivered message (µs)
	missed   int     // deliveries that did not arrive
}

// idleSocket is one measuring client: it records when each broadcast arrived.
type idleSocket struct {
	conn     *websocket.Conn
	mu       sync.Mutex
	arrivals []time.Time
}

// measureWS opens n websockets to url on the server process pid, measures the RSS they
// add (against rss0, the process's RSS before it ever held a socket), then fires
// broadcasts one at a time (each waits until every socket has it or 5 s passed) and
// measures delivery latency from the trigger and the server's CPU per delivery.
// A message counts as a broadcast when it contains `"type":"clock"`.
func measureWS(ctx context.Context, pid int, rss0 int64, url string, n, broadcasts int, fire func() error) (wsMeasure, error) {
	var m wsMeasure
	ss := &socketSet{socks: make([]*idleSocket, n)}
	dialErr := ss.open(ctx, url)
	defer ss.close()
	if dialErr != nil {
		return m, fmt.Errorf("dial: %w", dialErr)
	}
	time.Sleep(3 * time.Second) // hellos delivered, write buffers released
	m.kib = float64(server.RSS(pid)-rss0) / float64(n) / 1024

	cpu0 := server.CPU(pid)
	sent := make([]time.Time, 0, broadcasts)
	for k := 1; k <= broadcasts; k++ {
		sent = append(sent, time.Now())
		if err := fire(); err != nil {
			return m, fmt.Errorf("broadcast %d: %w", k, err)
		}
		deadline := time.Now().Add(5 * time.Second)
		for ss.got.Load() < int64(k*n) && time.Now().Before(deadline) {
			time.Sleep(5 * time.Millisecond)
		}
		time.Sleep(50 * time.Millisecond)
	}
	cpu := server.CPU(pid) - cpu0
	delivered := ss.got.Load()
	m.missed = broadcasts*n - int(delivered)
	if delivered > 0 {
		m.cpuUS = cpu / float64(delivered) * 1e6
	}
	if lat := ss.latencies(sent); len(lat) > 0 {
		l := stats.Summarize(lat)
		m.p50, m.p99 = l.P50, l.P99
	}
	return m, nil
}

// socketSet is the measuring clients of one side.
type socketSet struct {
	socks []*idleSocket
	got   atomic.Int64 // broadcasts received, over all sockets
	wg    sync.WaitGroup
}

// open dials every socket of the set to url, each with a reader recording the
// broadcasts it gets, and returns the last dial error.
func (ss *socketSet) open(ctx context.Context, url string) error {
	n := len(ss.socks)
	// Sockets come from many loopback addresses (127.0.1.x, 250 each), like clients
	// from many networks: a server's per-address cap (MAX_WS_PER_IP, default 500)
	// must not refuse the measurement.
	dialers := make([]*websocket.Dialer, (n+wsPerSourceIP-1)/wsPerSourceIP)
	for i := range dialers {
		local := &net.TCPAddr{IP: net.IPv4(127, 0, byte(1+i/250), byte(1+i%250))}
		dialers[i] = &websocket.Dialer{
			HandshakeTimeout: 15 * time.Second,
			ReadBufferSize:   512,
			WriteBufferSize:  256,
			NetDialContext:   (&net.Dialer{Timeout: 10 * time.Second, LocalAddr: local}).DialContext,
		}
	}
	var dialErr atomic.Value
	_ = client.Parallel(n, 64, func(i int) error {
		var conn *websocket.Conn
		var err error
		for attempt := 0; attempt < 3; attempt++ {
			if conn, _, err = dialers[i/wsPerSourceIP].DialContext(ctx, url, nil); err == nil {
				break
			}
			time.Sleep(time.Duration(100*(attempt+1)) * time.Millisecond)
		}
		if err != nil {
			dialErr.Store(err)
			return nil
		}
		s := &idleSocket{conn: conn}
		ss.socks[i] = s
		ss.wg.Add(1)
		go ss.read(s)
		return nil
	})
	e, _ := dialErr.Load().(error)
	return e
}

// read records the arrival of every broadcast on s until the connection ends.
func (ss *socketSet) read(s *idleSocket) {
	defer ss.wg.Done()
	for {
		_, b, err := s.conn.ReadMessage()
		if err != nil {
			return
		}
		if bytes.Contains(b, []byte(`"type":"clock"`)) {
			now := time.Now()
			s.mu.Lock()
			s.arrivals = append(s.arrivals, now)
			s.mu.Unlock()
			ss.got.Add(1)
		}
	}
}

// close closes every socket, waits for the readers and gives the server time to notice.
func (ss *socketSet) close() {
	for _, s := range ss.socks {
		if s != nil {
			s.conn.Close()
		}
	}
	ss.wg.Wait()
	time.Sleep(2 * time.Second) // let the server notice and release them
}

// latencies returns every delivery's delay from the sending of its broadcast.
func (ss *socketSet) latencies(sent []time.Time) []time.Duration {
	var lat []time.Duration
	for _, s := range ss.socks {
		s.mu.Lock()
		for k, at := range s.arrivals {
			if k < len(sent) {
				lat = append(lat, at.Sub(sent[k]))
			}
		}
		s.mu.Unlock()
	}
	return lat
}

// wsSide is one websocket server of a round: started fresh (its RSS before the first
// socket is the zero the sockets are measured from), measured, stopped.
type wsSide struct {
	name  string
	start func() (p *server.Background, url string, fire func() error, err error)
}

func (s wsSide) measure(ctx context.Context, sockets, broadcasts int) (wsMeasure, error) {
	p, url, fire, err := s.start()
	if err != nil {
		return wsMeasure{}, err
	}
	defer p.Stop()
	time.Sleep(time.Second)
	return measureWS(ctx, p.PID(), server.RSS(p.PID()), url, sockets, broadcasts, fire)
}

// podiumSide is a podium process of its own for the websocket figures (never the one
// that served the HTTP phases), on a fresh data directory.
func podiumSide(ctx context.Context, bin, root, password string, round int, cfg *Config) wsSide {
	return wsSide{name: "podium", start: func() (*server.Background, string, func() error, error) {
		env := append([]string{"PORT=0", "DATA_DIR=" + filepath.Join(root, fmt.Sprintf("data-ws-%d", round)),
			"ADMIN_PASSWORD=" + password, "LOG_LEVEL=" + cfg.LogLevel,
			fmt.Sprintf("MAX_WS_CONNECTIONS=%d", cfg.Sockets+1000)}, cfg.ServerEnv...)
		p, err := server.StartBackground([]string{bin}, env, listening)
		if err != nil {
			return nil, "", nil, err
		}
		admin := client.New("http://"+p.Addr(), password, client.NewHostClient("http://"+p.Addr(), 4, 30*time.Second), nil)
		if err := admin.WaitReady(ctx); err != nil {
			p.Stop()
			return nil, "", nil, err
		}
		return p, "ws://" + p.Addr() + "/api/ws", podiumClockToggle(ctx, admin), nil
	}}
}

// baselineSide is the gorilla/websocket broadcaster (baseline.go) in a process of its own.
func baselineSide(cfg *Config) wsSide {
	return wsSide{name: "baseline", start: func() (*server.Background, string, func() error, error) {
		p, err := server.StartBackground(cfg.BaselineCmd, nil, regexp.MustCompile(`baseline listening on http://(\S+)`))
		if err != nil {
			return nil, "", nil, err
		}
		return p, "ws://" + p.Addr() + "/ws", baselineFire("http://" + p.Addr()), nil
	}}
}

// podiumClockToggle returns a broadcast trigger that pauses or unpauses the clock (each
// call the opposite of the last), which sends one "clock" message to every socket. The
// server is fresh: its clock starts paused.
func podiumClockToggle(ctx context.Context, admin *client.Client) func() error {
	pause := false
	return func() error {
		action := "unpause"
		if pause {
			action = "pause"
		}
		pause = !pause
		_, err := admin.SetClock(ctx, action)
		return err
	}
}

// baselineFire returns a broadcast trigger for the baseline server: POST /broadcast with a
// message of the size of Podium's clock message.
func baselineFire(base string) func() error {
	hc := client.NewHostClient(base, 4, 30*time.Second)
	seq := 0
	return func() error {
		seq++
		req, resp := fasthttp.AcquireRequest(), fasthttp.AcquireResponse()
		defer fasthttp.ReleaseRequest(req)
		defer fasthttp.ReleaseResponse(resp)
		req.SetRequestURI(base + "/broadcast")
		req.Header.SetMethod("POST")
		req.SetBodyString(fmt.Sprintf(`{"type":"clock","seq":%d,"data":{"running":false,"time":%d,"start_time":%d,"pause_time":%d}}`,
			seq, 123456, time.Now().UnixMilli()-123456, time.Now().UnixMilli()))
		if err := hc.DoTimeout(req, resp, 30*time.Second); err != nil {
			return err
		}
		if resp.StatusCode() != 200 {
			return fmt.Errorf("baseline /broadcast: %d", resp.StatusCode())
		}
		return nil
	}
}
