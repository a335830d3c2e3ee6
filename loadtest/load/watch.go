package load

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fasthttp/websocket"

	"podium/loadtest/client"
	"podium/loadtest/stats"
)

// clockKey identifies one clock state; every pause/unpause produces a new one, so it
// matches a received "clock" event to the admin request that caused it.
type clockKey struct {
	running      bool
	start, pause int64
}

func keyOf(c client.Clock) clockKey { return clockKey{c.Running, c.StartTime, c.PauseTime} }

// watcher is one websocket screen: an expo display (anonymous), a judge's phone or an
// admin dashboard.
type watcher struct {
	kind   string // anonymous | judge | admin
	conn   *websocket.Conn
	ready  atomic.Int64 // Unix ns of the first hello (0: none yet)
	closed atomic.Int64 // Unix ns when the connection ended (0: open)
	remote atomic.Bool  // ended by the server or the network, not by us

	mu  sync.Mutex
	got map[clockKey]time.Time
}

// watchers is the set of websocket clients of a run.
type watchers struct {
	list       []*watcher
	wg         sync.WaitGroup
	dialFailed int
	dialErrs   map[string]int
	stopping   atomic.Bool
}

func wsURL(base string) string {
	switch {
	case strings.HasPrefix(base, "https://"):
		return "wss://" + strings.TrimPrefix(base, "https://") + "/api/ws"
	default:
		return "ws://" + strings.TrimPrefix(base, "http://") + "/api/ws"
	}
}

// startWatchers opens n websocket connections: a few admins, up to n/10 judges (using
// the given judges' tokens) and anonymous screens for the rest.
func startWatchers(ctx context.Context, base string, n int, judges []*judgeRec, adminPassword string) *watchers {
	ws := &watchers{dialErrs: map[string]int{}}
	if n <= 0 {
		return ws
	}
	admins := min(n, 3)
	if n < 10 {
		admins = min(n, 1)
	}
	nj := min(len(judges), n/10)
	dialer := &websocket.Dialer{
		HandshakeTimeout: 15 * time.Second,
		ReadBufferSize:   2048,
		WriteBufferSize:  512,
		NetDialContext:   (&net.Dialer{Timeout: 10 * time.Second}).DialContext,
	}
	url := wsURL(base)
	var mu sync.Mutex
	list := make([]*watcher, n)
	_ = client.Parallel(n, 64, func(i int) error {
		w := &watcher{kind: "anonymous", got: map[clockKey]time.Time{}}
		var authMsg any
		switch {
		case i < admins:
			w.kind = "admin"
			authMsg = map[string]string{"type": "auth", "password": adminPassword}
		case i < admins+nj:
			w.kind = "judge"
			j := judges[i-admins]
			j.mu.Lock()
			authMsg = map[string]string{"type": "auth", "token": j.token}
			j.mu.Unlock()
		}
		var conn *websocket.Conn
		var err error
		for attempt := 0; attempt < 3; attempt++ {
			// Each watcher stands for one phone: its own address (the server trusts the
			// loopback proxy), so MAX_WS_PER_IP does not apply to the whole load test.
			conn, _, err = dialer.DialContext(ctx, url, http.Header{"X-Forwarded-For": {client.FakeIP(i)}})
			if err == nil || ctx.Err() != nil {
				break
			}
			time.Sleep(time.Duration(100*(attempt+1)) * time.Millisecond)
		}
		if err == nil && authMsg != nil {
			err = conn.WriteJSON(authMsg)
		}
		if err != nil {
			mu.Lock()
			ws.dialFailed++
			ws.dialErrs[shortErr(err)]++
			mu.Unlock()
			if conn != nil {
				conn.Close()
			}
			return nil
		}
		w.conn = conn
		list[i] = w
		ws.wg.Add(1)
		go ws.read(w)
		return nil
	})
	for _, w := range list {
		if w != nil {
			ws.list = append(ws.list, w)
		}
	}
	return ws
}

func shortErr(err error) string {
	s := err.Error()
	if i := strings.LastIndex(s, ": "); i >= 0 && len(s)-i < 80 {
		s = s[i+2:]
	}
	if len(s) > 80 {
		s = s[:80] + "..."
	}
	return s
}

func (ws *watchers) read(w *watcher) {
	defer ws.wg.Done()
	var msg struct {
		Type string          `json:"type"`
		Data json.RawMessage `json:"data"`
	}
	for {
		_, data, err := w.conn.ReadMessage()
		now := time.Now()
		if err != nil {
			w.closed.CompareAndSwap(0, now.UnixNano())
			if !ws.stopping.Load() {
				w.remote.Store(true)
			}
			return
		}
		msg.Type, msg.Data = "", nil
		if json.Unmarshal(data, &msg) != nil {
			continue
		}
		switch msg.Type {
		case "hello":
			w.ready.CompareAndSwap(0, now.UnixNano())
		case "clock":
			var c client.Clock
			if json.Unmarshal(msg.Data, &c) == nil {
				w.mu.Lock()
				if _, seen := w.got[keyOf(c)]; !seen {
					w.got[keyOf(c)] = now
				}
				w.mu.Unlock()
			}
		}
	}
}

// close ends every connection and waits for the readers.
func (ws *watchers) close() {
	ws.stopping.Store(true)
	for _, w := range ws.list {
		w.closed.CompareAndSwap(0, time.Now().UnixNano())
		_ = w.conn.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(websocket.CloseNormalClosure, ""), time.Now().Add(time.Second))
		w.conn.Close()
	}
	ws.wg.Wait()
}

// toggle is one clock change made by the admin side: the state it produced and when
// the request was sent.
type toggle struct {
	key  clockKey
	sent time.Time
	ack  time.Time
}

// BroadcastReport is the delivery of clock broadcasts to the websocket watchers.
type BroadcastReport struct {
	Watchers      int            `json:"watchers"`          // asked for
	Connected     int            `json:"connected"`         // dialled successfully
	Hello         int            `json:"hello_received"`    // got a hello (counted as subscribed)
	DialFailed    int            `json:"dial_failed"`       // could not connect
	DialErrors    map[string]int `json:"dial_errors"`       // reason -> count
	Dropped       int            `json:"dropped"`           // closed by the server/network during the run
	Broadcasts    int            `json:"broadcasts"`        // clock changes made by the admin side
	Expected      int            `json:"expected"`          // (broadcast, subscribed watcher) pairs
	Delivered     int            `json:"delivered"`         // pairs received
	Missed        int            `json:"missed"`            // pairs never received by watchers that stayed connected
	ClientsMissed int            `json:"clients_missed"`    // such watchers that missed at least one broadcast
	MissedDropped int            `json:"missed_by_dropped"` // pairs never received by watchers the server dropped later
	Latency       stats.Latency  `json:"latency"`           // from the admin's request being sent to receipt
	AfterAck      stats.Latency  `json:"latency_after_ack"` // receipt relative to the admin's 200 (negative = before it)
	ByKind        map[string]int `json:"connected_by_kind"`
	DroppedByKind map[string]int `json:"dropped_by_kind"`
}

func (ws *watchers) analyze(n int, toggles []toggle) BroadcastReport {
	rep := BroadcastReport{Watchers: n, Connected: len(ws.list), DialFailed: ws.dialFailed, DialErrors: ws.dialErrs, Broadcasts: len(toggles), ByKind: map[string]int{}, DroppedByKind: map[string]int{}}
	var lat, after []time.Duration
	missedBy := map[*watcher]bool{}
	for _, w := range ws.list {
		rep.ByKind[w.kind]++
		if w.ready.Load() != 0 {
			rep.Hello++
		}
		if w.remote.Load() {
			rep.Dropped++
			rep.DroppedByKind[w.kind]++
		}
	}
	for _, t := range toggles {
		for _, w := range ws.list {
			ready := w.ready.Load()
			closed := w.closed.Load()
			if ready == 0 || ready >= t.sent.UnixNano() || (closed != 0 && closed <= t.sent.UnixNano()) {
				continue
			}
			rep.Expected++
			w.mu.Lock()
			at, ok := w.got[t.key]
			w.mu.Unlock()
			if !ok {
				if w.remote.Load() {
					rep.MissedDropped++
					continue
				}
				rep.Missed++
				missedBy[w] = true
				continue
			}
			rep.Delivered++
			lat = append(lat, at.Sub(t.sent))
			d := at.Sub(t.ack)
			if d < 0 {
				d = 0
			}
			after = append(after, d)
		}
	}
	rep.ClientsMissed = len(missedBy)
	rep.Latency = stats.Summarize(lat)
	rep.AfterAck = stats.Summarize(after)
	return rep
}

// clockToggler pauses and unpauses the clock on a schedule, recording each change.
type clockToggler struct {
	mu      sync.Mutex
	last    clockKey // the clock state before the next change
	toggles []toggle
	errs    []string
}

func (ct *clockToggler) run(stop <-chan struct{}, c *client.Client, every, pause time.Duration) {
	ctx := context.Background()
	do := func(action string) {
		sent := time.Now()
		clk, err := c.SetClock(ctx, action)
		ack := time.Now()
		ct.mu.Lock()
		defer ct.mu.Unlock()
		if err != nil {
			ct.errs = append(ct.errs, err.Error())
			return
		}
		if k := keyOf(clk); k != ct.last { // an unchanged clock broadcasts nothing
			ct.toggles = append(ct.toggles, toggle{key: k, sent: sent, ack: ack})
			ct.last = k
		}
	}
	for sleepOr(stop, every) {
		do("pause")
		time.Sleep(pause) // always unpause, even when stopping
		do("unpause")
	}
}

func (ct *clockToggler) list() []toggle {
	ct.mu.Lock()
	defer ct.mu.Unlock()
	out := append([]toggle(nil), ct.toggles...)
	sort.Slice(out, func(i, j int) bool { return out[i].sent.Before(out[j].sent) })
	return out
}

var errNoWS = errors.New("websocket endpoint unavailable")

func wsProbe(ctx context.Context, base string) error {
	d := &websocket.Dialer{HandshakeTimeout: 5 * time.Second}
	conn, resp, err := d.DialContext(ctx, wsURL(base), nil)
	if err != nil {
		if resp != nil {
			return fmt.Errorf("%w: upgrade answered %d", errNoWS, resp.StatusCode)
		}
		return fmt.Errorf("%w: %v", errNoWS, err)
	}
	conn.Close()
	return nil
}
