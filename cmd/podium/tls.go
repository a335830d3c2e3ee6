package main

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/rs/zerolog"
	"golang.org/x/crypto/acme/autocert"
)

// HTTPS served by Podium itself (docs/operations.md#https-on-the-floor): the judge
// app opens offline only in a secure context, which a phone on the hall's LAN gets
// from https alone. TLS_CERT_FILE + TLS_KEY_FILE serve a certificate the organiser
// has; TLS_DOMAIN gets one automatically from Let's Encrypt (ACME), kept under
// DATA_DIR/autocert.

// tlsSettings are the TLS_* variables.
type tlsSettings struct {
	certFile, keyFile string
	domain            string
	// acmeHTTPAddr serves ACME's http-01 challenge (and sends plain http to https)
	// when domain is set; "" or "off": not served.
	acmeHTTPAddr string
}

func loadTLSSettings() (tlsSettings, error) {
	t := tlsSettings{
		certFile: env("TLS_CERT_FILE"), keyFile: env("TLS_KEY_FILE"),
		domain: strings.TrimSpace(env("TLS_DOMAIN")), acmeHTTPAddr: env("ACME_HTTP_ADDR"),
	}
	if t.acmeHTTPAddr == "" {
		t.acmeHTTPAddr = ":80"
	}
	switch {
	case (t.certFile == "") != (t.keyFile == ""):
		return t, errors.New("TLS_CERT_FILE and TLS_KEY_FILE go together: set both (the certificate chain and its private key, PEM) or neither")
	case t.domain != "" && t.certFile != "":
		return t, errors.New("TLS_DOMAIN gets certificates automatically and cannot be combined with TLS_CERT_FILE/TLS_KEY_FILE: set one or the other")
	case t.domain != "" && !validDomain(t.domain):
		return t, fmt.Errorf("TLS_DOMAIN=%q: want a public host name such as judging.example.org (no scheme, port, path or IP address)", t.domain)
	}
	return t, nil
}

// validDomain reports whether d looks like a DNS name a certificate authority would
// issue for: dot-separated labels of letters, digits and hyphens, not an IP address.
func validDomain(d string) bool {
	if len(d) > 253 || net.ParseIP(d) != nil || !strings.Contains(d, ".") {
		return false
	}
	for _, label := range strings.Split(d, ".") {
		if label == "" || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
			return false
		}
		for _, c := range label {
			if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-') {
				return false
			}
		}
	}
	return true
}

// on reports whether Podium serves HTTPS.
func (t tlsSettings) on() bool { return t.certFile != "" || t.domain != "" }

// config returns the TLS configuration to serve with (nil: plain http) and, for
// TLS_DOMAIN, a function that starts the ACME http-01 listener and returns its stop.
// A certificate file that cannot be read or does not match its key is an error here,
// before anything else starts.
func (t tlsSettings) config(dataDir string, log zerolog.Logger) (*tls.Config, func() func(), error) {
	switch {
	case t.certFile != "":
		r := &certReloader{certFile: t.certFile, keyFile: t.keyFile, log: log}
		if err := r.load(); err != nil {
			return nil, nil, fmt.Errorf("TLS_CERT_FILE/TLS_KEY_FILE: %w", err)
		}
		return &tls.Config{
			MinVersion:     tls.VersionTLS12,
			GetCertificate: r.get,
			NextProtos:     []string{"http/1.1"}, // fasthttp speaks no HTTP/2
		}, nil, nil
	case t.domain != "":
		m := &autocert.Manager{
			Prompt:     autocert.AcceptTOS,
			HostPolicy: autocert.HostWhitelist(t.domain),
			Cache:      autocert.DirCache(filepath.Join(dataDir, "autocert")),
		}
		cfg := m.TLSConfig()
		cfg.MinVersion = tls.VersionTLS12
		// tls-alpn-01 answers on this listener; no "h2": fasthttp speaks HTTP/1.1 only.
		cfg.NextProtos = []string{"http/1.1", "acme-tls/1"}
		start := func() func() { return t.serveACMEHTTP(m, log) }
		return cfg, start, nil
	}
	return nil, nil, nil
}

// serveACMEHTTP answers ACME http-01 challenges on acmeHTTPAddr and redirects every
// other plain-http request to https. A port that cannot be bound is logged, not fatal:
// the tls-alpn-01 challenge on the HTTPS port may still get the certificate.
func (t tlsSettings) serveACMEHTTP(m *autocert.Manager, log zerolog.Logger) func() {
	if t.acmeHTTPAddr == "off" {
		return func() {}
	}
	ln, err := net.Listen("tcp", t.acmeHTTPAddr)
	if err != nil {
		log.Warn().Err(err).Str("addr", t.acmeHTTPAddr).
			Msg("cannot serve the ACME http-01 challenge; certificates come only through tls-alpn-01 on port 443")
		return func() {}
	}
	srv := &http.Server{Handler: m.HTTPHandler(nil), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	return func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
	}
}

// certReloader serves the certificate of TLS_CERT_FILE/TLS_KEY_FILE and reads the
// pair again when either file changes (a renewal needs no restart). A pair that does
// not load (a renewal half written, a key that does not match) leaves the one in use
// and is logged once.
type certReloader struct {
	certFile, keyFile string
	log               zerolog.Logger

	mu                sync.Mutex
	cert              *tls.Certificate
	certMod, keyMod   time.Time // of the pair in use
	failCert, failKey time.Time // of the last pair that did not load
}

// load reads the pair; on success it is the one served.
func (r *certReloader) load() error {
	cm, km := modTime(r.certFile), modTime(r.keyFile)
	cert, err := tls.LoadX509KeyPair(r.certFile, r.keyFile)
	if err != nil {
		return err
	}
	r.cert, r.certMod, r.keyMod = &cert, cm, km
	return nil
}

// get is tls.Config.GetCertificate: a stat of both files per handshake.
func (r *certReloader) get(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	cm, km := modTime(r.certFile), modTime(r.keyFile)
	if (cm.Equal(r.certMod) && km.Equal(r.keyMod)) || (cm.Equal(r.failCert) && km.Equal(r.failKey)) {
		return r.cert, nil
	}
	if err := r.load(); err != nil {
		r.failCert, r.failKey = cm, km
		r.log.Warn().Err(err).Msg("TLS_CERT_FILE/TLS_KEY_FILE changed but do not load; serving the previous certificate")
		return r.cert, nil
	}
	r.log.Info().Msg("TLS certificate reloaded")
	return r.cert, nil
}

// modTime is the file's modification time (zero when it cannot be read).
func modTime(path string) time.Time {
	fi, err := os.Stat(path)
	if err != nil {
		return time.Time{}
	}
	return fi.ModTime()
}
