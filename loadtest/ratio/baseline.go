package ratio

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"runtime"
	"sync"
	"time"

	"github.com/gorilla/websocket"
)

// ServeBaseline runs the yardstick of the ratio benchmark: a tuned broadcaster on
// net/http and gorilla/websocket. GET /ws holds a websocket (its handler goroutine is the
// only reader; small read buffer, pooled write buffers); POST /broadcast sends the
// request body to every socket as one message prepared once (websocket.PreparedMessage),
// written by 2×GOMAXPROCS goroutines over interleaved shares of the sockets, and answers
// when every write is done. It prints "baseline listening on http://ADDR" and serves
// until the process ends.
func ServeBaseline(addr string) error {
	b := &baseline{conns: map[*websocket.Conn]struct{}{}}
	up := websocket.Upgrader{
		ReadBufferSize:  1024,
		WriteBufferSize: 1024,
		WriteBufferPool: &sync.Pool{},
		CheckOrigin:     func(*http.Request) bool { return true },
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /ws", func(w http.ResponseWriter, r *http.Request) {
		c, err := up.Upgrade(w, r, nil)
		if err != nil {
			return
		}
		b.mu.Lock()
		b.conns[c] = struct{}{}
		b.mu.Unlock()
		c.SetReadLimit(4 << 10)
		for {
			if _, _, err := c.NextReader(); err != nil {
				break
			}
		}
		b.mu.Lock()
		delete(b.conns, c)
		b.mu.Unlock()
		c.Close()
	})
	mux.HandleFunc("POST /broadcast", func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(io.LimitReader(r.Body, 64<<10))
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		if err := b.broadcast(body); err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		_, _ = io.WriteString(w, "ok")
	})
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	fmt.Printf("baseline listening on http://%s\n", ln.Addr())
	return (&http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}).Serve(ln)
}

type baseline struct {
	mu    sync.Mutex
	conns map[*websocket.Conn]struct{}
	send  sync.Mutex // one broadcast at a time: a connection has one writer
}

func (b *baseline) broadcast(msg []byte) error {
	pm, err := websocket.NewPreparedMessage(websocket.TextMessage, msg)
	if err != nil {
		return err
	}
	b.send.Lock()
	defer b.send.Unlock()
	b.mu.Lock()
	list := make([]*websocket.Conn, 0, len(b.conns))
	for c := range b.conns {
		list = append(list, c)
	}
	b.mu.Unlock()
	workers := 2 * runtime.GOMAXPROCS(0)
	deadline := time.Now().Add(10 * time.Second)
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < len(list); i += workers {
				c := list[i]
				_ = c.SetWriteDeadline(deadline)
				if c.WritePreparedMessage(pm) != nil {
					_ = c.Close()
				}
			}
		}()
	}
	wg.Wait()
	return nil
}
