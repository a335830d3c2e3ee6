package cluster

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"sync"
	"time"

	"github.com/hashicorp/raft"
	"github.com/rs/zerolog"
)

// Raft connections are authenticated before raft sees a byte (docs/behaviour.md#cluster). The dialer
// sends a magic and its nonce; the listener answers with its own nonce and a MAC that
// proves it knows the secret; the dialer answers with its MAC. Each MAC covers both
// fresh nonces and the side that made it, so no answer can be replayed or reflected.
//
//	dialer   → magic(8) nonceD(32)
//	listener → magic(8) nonceL(32) HMAC(secret, "L" nonceD nonceL)
//	dialer   → HMAC(secret, "D" nonceD nonceL)
const (
	authMagic     = "PODRAFT1"
	authNonceSize = 32
	authTimeout   = 5 * time.Second
)

// errAuth is any failed handshake (wrong secret, wrong protocol, timeout).
var errAuth = errors.New("raft connection failed authentication")

func authMAC(secret []byte, side byte, nd, nl []byte) []byte {
	m := hmac.New(sha256.New, secret)
	m.Write([]byte{side})
	m.Write(nd)
	m.Write(nl)
	return m.Sum(nil)
}

func newNonce() ([]byte, error) {
	b := make([]byte, authNonceSize)
	if _, err := rand.Read(b); err != nil {
		return nil, err
	}
	return b, nil
}

// authDial runs the dialer's side of the handshake on c.
func authDial(c net.Conn, secret []byte) error {
	_ = c.SetDeadline(time.Now().Add(authTimeout))
	defer c.SetDeadline(time.Time{})
	nd, err := newNonce()
	if err != nil {
		return err
	}
	if _, err := c.Write(append([]byte(authMagic), nd...)); err != nil {
		return err
	}
	buf := make([]byte, len(authMagic)+authNonceSize+sha256.Size)
	if _, err := io.ReadFull(c, buf); err != nil {
		return errAuth
	}
	if string(buf[:len(authMagic)]) != authMagic {
		return errAuth
	}
	nl := buf[len(authMagic) : len(authMagic)+authNonceSize]
	if !hmac.Equal(buf[len(authMagic)+authNonceSize:], authMAC(secret, 'L', nd, nl)) {
		return errAuth
	}
	_, err = c.Write(authMAC(secret, 'D', nd, nl))
	return err
}

// authAccept runs the listener's side of the handshake on c.
func authAccept(c net.Conn, secret []byte) error {
	_ = c.SetDeadline(time.Now().Add(authTimeout))
	defer c.SetDeadline(time.Time{})
	buf := make([]byte, len(authMagic)+authNonceSize)
	if _, err := io.ReadFull(c, buf); err != nil {
		return errAuth
	}
	if string(buf[:len(authMagic)]) != authMagic {
		return errAuth
	}
	nd := append([]byte(nil), buf[len(authMagic):]...)
	nl, err := newNonce()
	if err != nil {
		return err
	}
	out := append([]byte(authMagic), nl...)
	out = append(out, authMAC(secret, 'L', nd, nl)...)
	if _, err := c.Write(out); err != nil {
		return errAuth
	}
	mac := make([]byte, sha256.Size)
	if _, err := io.ReadFull(c, mac); err != nil {
		return errAuth
	}
	if !hmac.Equal(mac, authMAC(secret, 'D', nd, nl)) {
		return errAuth
	}
	return nil
}

// authLayer is a raft.StreamLayer over TCP whose connections have all passed the
// handshake. Handshakes run on their own goroutines so a silent peer cannot hold up
// Accept.
type authLayer struct {
	ln        net.Listener
	advertise net.Addr
	secret    []byte
	// tls, when set (RAFT_TLS_*), wraps every connection in mutual TLS before the
	// HMAC handshake.
	tls      *tls.Config
	log      zerolog.Logger
	onReject func()

	conns     chan net.Conn
	done      chan struct{}
	closeOnce sync.Once
	// rejectLog rate-limits the log line for refused connections.
	rejectMu   sync.Mutex
	rejectAt   time.Time
	rejectSkip int
}

func newAuthLayer(bind string, advertise string, secret []byte, tlsCfg *tls.Config, log zerolog.Logger) (*authLayer, error) {
	ln, err := net.Listen("tcp", bind)
	if err != nil {
		return nil, fmt.Errorf("RAFT_ADDR %s: %w", bind, err)
	}
	var adv net.Addr = ln.Addr()
	if advertise != "" {
		a, err := net.ResolveTCPAddr("tcp", advertise)
		if err != nil {
			ln.Close()
			return nil, fmt.Errorf("RAFT_ADVERTISE %s: %w", advertise, err)
		}
		adv = a
	}
	l := &authLayer{ln: ln, advertise: adv, secret: secret, tls: tlsCfg, log: log, conns: make(chan net.Conn), done: make(chan struct{})}
	go l.acceptLoop()
	return l, nil
}

func (l *authLayer) acceptLoop() {
	backoff := 5 * time.Millisecond
	for {
		c, err := l.ln.Accept()
		if err != nil {
			select {
			case <-l.done:
				return
			default:
			}
			// Out of descriptors and the like: retry with back-off, never give up.
			time.Sleep(backoff)
			if backoff < time.Second {
				backoff *= 2
			}
			continue
		}
		backoff = 5 * time.Millisecond
		go func() {
			c, err := l.secure(c, false, "")
			if err == nil {
				err = authAccept(c, l.secret)
			}
			if err != nil {
				l.reject(c.RemoteAddr(), err)
				c.Close()
				return
			}
			select {
			case l.conns <- c:
			case <-l.done:
				c.Close()
			}
		}()
	}
}

func (l *authLayer) reject(from net.Addr, err error) {
	if l.onReject != nil {
		l.onReject()
	}
	l.rejectMu.Lock()
	defer l.rejectMu.Unlock()
	if time.Since(l.rejectAt) < time.Second {
		l.rejectSkip++
		return
	}
	l.log.Warn().Str("from", from.String()).Err(err).Int("more", l.rejectSkip).Msg("refused a raft connection")
	l.rejectAt, l.rejectSkip = time.Now(), 0
}

// Accept returns the next authenticated connection.
func (l *authLayer) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.done:
		return nil, errors.New("raft listener closed")
	}
}

// Close stops listening.
func (l *authLayer) Close() error {
	var err error
	l.closeOnce.Do(func() {
		close(l.done)
		err = l.ln.Close()
	})
	return err
}

// Addr is the advertised address.
func (l *authLayer) Addr() net.Addr { return l.advertise }

// Dial connects to a peer and authenticates both ends.
func (l *authLayer) Dial(addr raft.ServerAddress, timeout time.Duration) (net.Conn, error) {
	d := net.Dialer{Timeout: timeout}
	c, err := d.Dial("tcp", string(addr))
	if err != nil {
		return nil, err
	}
	c, err = l.secure(c, true, string(addr))
	if err == nil {
		err = authDial(c, l.secret)
	}
	if err != nil {
		c.Close()
		return nil, fmt.Errorf("raft peer %s: %w", addr, err)
	}
	return c, nil
}

// secure runs the TLS handshake when mutual TLS is configured (both sides present a
// certificate signed by RAFT_TLS_CA; the dialer checks the peer's name against the
// address it dialled).
func (l *authLayer) secure(c net.Conn, client bool, addr string) (net.Conn, error) {
	if l.tls == nil {
		return c, nil
	}
	cfg := l.tls.Clone()
	var tc *tls.Conn
	if client {
		host, _, _ := net.SplitHostPort(addr)
		cfg.ServerName = host
		tc = tls.Client(c, cfg)
	} else {
		tc = tls.Server(c, cfg)
	}
	_ = c.SetDeadline(time.Now().Add(authTimeout))
	err := tc.Handshake()
	_ = c.SetDeadline(time.Time{})
	if err != nil {
		return c, fmt.Errorf("%w: tls: %v", errAuth, err)
	}
	return tc, nil
}

// loadRaftTLS builds the mutual-TLS configuration from RAFT_TLS_CERT, RAFT_TLS_KEY and
// RAFT_TLS_CA.
func loadRaftTLS(certFile, keyFile, caFile string) (*tls.Config, error) {
	cert, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		return nil, fmt.Errorf("RAFT_TLS_CERT/RAFT_TLS_KEY: %w", err)
	}
	pem, err := os.ReadFile(caFile)
	if err != nil {
		return nil, fmt.Errorf("RAFT_TLS_CA: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("RAFT_TLS_CA=%s: no PEM certificate in it", caFile)
	}
	return &tls.Config{
		Certificates: []tls.Certificate{cert}, RootCAs: pool, ClientCAs: pool,
		ClientAuth: tls.RequireAndVerifyClientCert, MinVersion: tls.VersionTLS13,
	}, nil
}
