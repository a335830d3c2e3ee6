package main

import (
	"bufio"
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
)

// HTTPS served by Podium (docs/operations.md#https-on-the-floor) and the generated admin
// password shown where a person sees it (docs/behaviour.md#authentication).

// selfSigned writes a self-signed certificate for hosts and its key into dir and
// returns the two paths.
func selfSigned(t *testing.T, dir string, hosts ...string) (certFile, keyFile string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()),
		Subject:      pkix.Name{CommonName: hosts[0]},
		DNSNames:     hosts,
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kb, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb}), 0o600); err != nil {
		t.Fatal(err)
	}
	return certFile, keyFile
}

// runBinary runs the binary to its end (it must stop by itself within 20 s) and
// returns its exit code, stdout and stderr.
func runBinary(t *testing.T, env ...string) (int, string, string) {
	t.Helper()
	cmd := exec.Command(podiumBinary(t))
	cmd.Env = append(os.Environ(), "PORT=0", "DATA_DIR="+t.TempDir(), "ADMIN_PASSWORD="+killPassword)
	cmd.Env = append(cmd.Env, env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		var exit *exec.ExitError
		if err != nil && !errors.As(err, &exit) {
			t.Fatal(err)
		}
		return cmd.ProcessState.ExitCode(), stdout.String(), stderr.String()
	case <-time.After(20 * time.Second):
		_ = cmd.Process.Kill()
		<-done
		t.Fatalf("%v: still running; it should have refused to start:\n%s%s", env, stdout.String(), stderr.String())
	}
	return 0, "", ""
}

// TestTLSConfigurationErrors: a TLS setting that cannot work stops the start with one
// clear line and a non-zero exit, before anything is served.
func TestTLSConfigurationErrors(t *testing.T) {
	dir := t.TempDir()
	cert, key := selfSigned(t, dir, "podium.test")
	missing := filepath.Join(dir, "nope.pem")
	cases := []struct {
		env  []string
		want string
	}{
		{[]string{"TLS_CERT_FILE=" + cert}, "TLS_CERT_FILE and TLS_KEY_FILE go together"},
		{[]string{"TLS_KEY_FILE=" + key}, "TLS_CERT_FILE and TLS_KEY_FILE go together"},
		{[]string{"TLS_CERT_FILE=" + missing, "TLS_KEY_FILE=" + key}, "TLS_CERT_FILE/TLS_KEY_FILE: open " + missing},
		{[]string{"TLS_CERT_FILE=" + key, "TLS_KEY_FILE=" + cert}, "TLS_CERT_FILE/TLS_KEY_FILE:"},
		{[]string{"TLS_DOMAIN=judging.example.org", "TLS_CERT_FILE=" + cert, "TLS_KEY_FILE=" + key}, "cannot be combined with TLS_CERT_FILE"},
		{[]string{"TLS_DOMAIN=https://judging.example.org/"}, `TLS_DOMAIN="https://judging.example.org/": want a public host name`},
		{[]string{"TLS_DOMAIN=192.168.1.20"}, "want a public host name"},
	}
	for _, c := range cases {
		code, stdout, stderr := runBinary(t, c.env...)
		lines := strings.Split(strings.TrimRight(stderr, "\n"), "\n")
		if code == 0 || stdout != "" || len(lines) != 1 || !strings.HasPrefix(lines[0], "podium: ") || !strings.Contains(lines[0], c.want) {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want one line with %q", c.env, code, stdout, stderr, c.want)
		}
	}
}

// TestAdminPasswordShownOnceOnStderr: a generated password is a plain block on stderr
// at the first start, never in the JSON log on stdout, and not shown again.
func TestAdminPasswordShownOnceOnStderr(t *testing.T) {
	dir := t.TempDir()
	start := func() (stdout, stderr *lockedBuffer, stop func()) {
		cmd := exec.Command(podiumBinary(t))
		cmd.Env = append(os.Environ(), "PORT=0", "DATA_DIR="+dir, "ADMIN_PASSWORD=", "JURY_ADMIN_PASSWORD=", "LOG_LEVEL=info")
		stdout, stderr = &lockedBuffer{}, &lockedBuffer{}
		cmd.Stdout, cmd.Stderr = stdout, stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		stop = func() {
			_ = cmd.Process.Signal(os.Interrupt)
			_ = cmd.Wait()
		}
		t.Cleanup(stop)
		deadline := time.Now().Add(30 * time.Second)
		for !strings.Contains(stdout.String(), "podium listening on") {
			if time.Now().After(deadline) {
				t.Fatalf("no start:\n%s\n%s", stdout.String(), stderr.String())
			}
			time.Sleep(50 * time.Millisecond)
		}
		time.Sleep(300 * time.Millisecond) // the block follows the listening line
		return stdout, stderr, stop
	}
	stdout, stderr, stop := start()
	stored, err := os.ReadFile(filepath.Join(dir, "admin_password"))
	if err != nil {
		t.Fatal(err)
	}
	password := strings.TrimSpace(string(stored))
	if len(password) < 20 {
		t.Fatalf("stored password %q", password)
	}
	if !strings.Contains(stderr.String(), "Podium admin password") || !strings.Contains(stderr.String(), "\n      "+password+"\n") {
		t.Fatalf("stderr has no password block:\n%s", stderr.String())
	}
	if strings.Contains(stdout.String(), password) {
		t.Fatalf("the password is on stdout, among the log lines:\n%s", stdout.String())
	}
	sc := bufio.NewScanner(strings.NewReader(stdout.String()))
	for sc.Scan() {
		if line := sc.Text(); !strings.HasPrefix(line, "podium listening on") && !json.Valid([]byte(line)) {
			t.Errorf("stdout line that is not a JSON log line: %q", line)
		}
	}
	stop()
	stdout, stderr, _ = start()
	if strings.Contains(stderr.String()+stdout.String(), password) {
		t.Fatalf("the password is shown again at the second start:\n%s\n%s", stdout.String(), stderr.String())
	}
}

// lockedBuffer is a bytes.Buffer a process writes to while the test reads it.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// startTLSBinary starts the binary with TLS settings on dir and returns it and the
// port of its https listener.
func startTLSBinary(t *testing.T, dir string, tlsEnv ...string) (*proc, string) {
	t.Helper()
	p := startBinary(t, dir, tlsEnv...)
	if !strings.HasPrefix(p.base, "https://") {
		t.Fatalf("no https listening line:\n%s", p.out.String())
	}
	return p, p.base[strings.LastIndex(p.base, ":")+1:]
}

// TestHTTPSJudgeAppOpensOffline: with TLS_CERT_FILE and TLS_KEY_FILE the binary serves
// https itself; a phone on a LAN name (not localhost) gets the service worker, and
// after the server is gone a reload still opens the app with the judge's project.
func TestHTTPSJudgeAppOpensOffline(t *testing.T) {
	const host = "podium.test" // a name, not localhost: only https makes it a secure context
	dir := t.TempDir()
	certFile, keyFile := selfSigned(t, t.TempDir(), host)
	p, port := startTLSBinary(t, dir, "TLS_CERT_FILE="+certFile, "TLS_KEY_FILE="+keyFile)
	base := "https://" + host + ":" + port
	// The admin calls go to 127.0.0.1 with the certificate's name.
	pool := x509.NewCertPool()
	pemBytes, _ := os.ReadFile(certFile)
	pool.AppendCertsFromPEM(pemBytes)
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{RootCAs: pool, ServerName: host},
	}}
	admin := func(method, path string, body any) []byte {
		t.Helper()
		var rd io.Reader
		if body != nil {
			b, _ := json.Marshal(body)
			rd = bytes.NewReader(b)
		}
		req, _ := http.NewRequest(method, "https://127.0.0.1:"+port+path, rd)
		req.Header.Set("Content-Type", "application/json")
		req.SetBasicAuth("admin", killPassword)
		resp, err := client.Do(req)
		if err != nil {
			t.Fatalf("%s %s: %v", method, path, err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != 200 {
			t.Fatalf("%s %s: %d %s", method, path, resp.StatusCode, b)
		}
		return b
	}
	for _, n := range appPrefs {
		admin("POST", "/api/project/new", map[string]any{"name": n, "description": "d"})
	}
	admin("POST", "/api/judge/new", map[string]any{"name": "Kim", "email": "kim@example.com", "no_send": true})
	var judges []struct{ Code string }
	json.Unmarshal(admin("GET", "/api/judge/list", nil), &judges)
	admin("POST", "/api/admin/clock/unpause", nil)
	// Plain http on the https port is not served.
	if resp, err := http.Get("http://127.0.0.1:" + port + "/"); err == nil && resp.StatusCode == 200 {
		resp.Body.Close()
		t.Fatal("plain http answered 200 on the https port")
	}

	ctx := appBrowser(t, chromedp.Flag("ignore-certificate-errors", true),
		chromedp.Flag("host-resolver-rules", "MAP "+host+" 127.0.0.1"))
	appRun(t, ctx, "log in over https", chromedp.Navigate(base+"/"), chromedp.WaitVisible(chromedp.CSS("#login-code")),
		chromedp.SendKeys(chromedp.CSS("#login-code"), judges[0].Code), chromedp.KeyEvent(kb.Enter))
	appRun(t, ctx, "welcome", chromedp.WaitVisible(chromedp.CSS("#welcome-ok")), chromedp.Click(chromedp.CSS("#welcome-ok")))
	appWait(t, ctx, "a project", `!document.querySelector('#view-project').hidden && document.querySelector('#project-name').textContent !== ''`)
	if !appEval[bool](t, ctx, `location.protocol === 'https:' && window.isSecureContext`) {
		t.Fatal("the page is not a secure https context")
	}
	appWait(t, ctx, "service worker in control", `!!navigator.serviceWorker.controller`)
	appWait(t, ctx, "live connection over wss", `document.querySelector('#notice-offline').hidden`)
	if !appEval[bool](t, ctx, `document.querySelector('#notice-nosw').hidden`) {
		t.Error("the no-service-worker warning shows over https")
	}
	name := appEval[string](t, ctx, `document.querySelector('#project-name').textContent`)
	p.kill()
	appRun(t, ctx, "reload with the server gone", chromedp.Reload())
	appWait(t, ctx, "the app opens offline", fmt.Sprintf(`!document.querySelector('#view-project').hidden && document.querySelector('#project-name').textContent === %s`, jsStr(name)))
	if dir := os.Getenv("PODIUM_SCREENSHOTS"); dir != "" {
		if png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100)); err == nil {
			_ = os.WriteFile(filepath.Join(dir, "https-offline.png"), png, 0o644)
		}
	}
}

// TestTLSDomainWithoutInternet: with TLS_DOMAIN the binary serves https through autocert
// (a name it was not given is refused in the handshake) and answers ACME's http-01
// port, redirecting plain http to https. Getting a certificate needs the internet,
// which this test does not have.
func TestTLSDomainWithoutInternet(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	acme := ln.Addr().String()
	ln.Close()
	dir := t.TempDir()
	_, port := startTLSBinary(t, dir, "TLS_DOMAIN=judging.example.org", "ACME_HTTP_ADDR="+acme)
	noRedirect := &http.Client{Timeout: 5 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	req, _ := http.NewRequest("GET", "http://"+acme+"/admin", nil)
	req.Host = "judging.example.org"
	resp, err := noRedirect.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if loc := resp.Header.Get("Location"); resp.StatusCode/100 != 3 || loc != "https://judging.example.org/admin" {
		t.Fatalf("plain http: %d to %q, want a redirect to https://judging.example.org/admin", resp.StatusCode, loc)
	}
	req, _ = http.NewRequest("GET", "http://"+acme+"/.well-known/acme-challenge/unknown-token", nil)
	req.Host = "judging.example.org"
	if resp, err = noRedirect.Do(req); err != nil {
		t.Fatal(err)
	} else if resp.Body.Close(); resp.StatusCode != 404 {
		t.Fatalf("unknown ACME token: %d, want 404", resp.StatusCode)
	}
	conn, err := tls.DialWithDialer(&net.Dialer{Timeout: 5 * time.Second}, "tcp", "127.0.0.1:"+port, &tls.Config{ServerName: "other.example.org", InsecureSkipVerify: true})
	if err == nil {
		conn.Close()
		t.Fatal("a TLS handshake for a name other than TLS_DOMAIN succeeded")
	}
}

// TestTLSCertificateReloaded: a renewed TLS_CERT_FILE/TLS_KEY_FILE pair is served
// without a restart; a pair that does not load leaves the one in use.
func TestTLSCertificateReloaded(t *testing.T) {
	certDir := t.TempDir()
	certFile, keyFile := selfSigned(t, certDir, "podium.test")
	_, port := startTLSBinary(t, t.TempDir(), "TLS_CERT_FILE="+certFile, "TLS_KEY_FILE="+keyFile)
	serial := func() string {
		t.Helper()
		conn, err := tls.DialWithDialer(&net.Dialer{Timeout: 5 * time.Second}, "tcp", "127.0.0.1:"+port, &tls.Config{ServerName: "podium.test", InsecureSkipVerify: true})
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		return conn.ConnectionState().PeerCertificates[0].SerialNumber.String()
	}
	touch := func(at time.Time) {
		for _, f := range []string{certFile, keyFile} {
			if err := os.Chtimes(f, at, at); err != nil {
				t.Fatal(err)
			}
		}
	}
	first := serial()
	selfSigned(t, certDir, "podium.test") // renewed in place
	touch(time.Now().Add(time.Minute))
	renewed := serial()
	if renewed == first {
		t.Fatalf("still serving serial %s after the renewal", first)
	}
	// A half-written renewal (the key of another certificate) keeps the renewed one.
	other, _ := selfSigned(t, t.TempDir(), "podium.test")
	b, _ := os.ReadFile(other)
	if err := os.WriteFile(certFile, b, 0o600); err != nil {
		t.Fatal(err)
	}
	touch(time.Now().Add(2 * time.Minute))
	if got := serial(); got != renewed {
		t.Fatalf("serving %s after a pair that does not match, want %s", got, renewed)
	}
}
