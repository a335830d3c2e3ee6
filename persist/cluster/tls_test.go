package cluster

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/raft"
)

// writeCA makes a CA and one node certificate (IP SAN 127.0.0.1) signed by it, and
// returns the file paths cert, key, ca.
func writeCA(t *testing.T, dir, name string) (string, string, string) {
	t.Helper()
	caKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	caTpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: name + " CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTpl, caTpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	ca, _ := x509.ParseCertificate(caDER)
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tpl := &x509.Certificate{
		SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: name + " node"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")},
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tpl, ca, &key.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, _ := x509.MarshalECPrivateKey(key)
	write := func(file, typ string, b []byte) string {
		p := filepath.Join(dir, name+"-"+file)
		if err := os.WriteFile(p, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: b}), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	return write("cert.pem", "CERTIFICATE", der), write("key.pem", "EC PRIVATE KEY", keyDER), write("ca.pem", "CERTIFICATE", caDER)
}

// TestRaftMutualTLS: with RAFT_TLS_* a peer needs a certificate from the cluster's CA
// (and the secret); one from another CA is refused before raft sees the connection.
func TestRaftMutualTLS(t *testing.T) {
	dir := t.TempDir()
	secret := []byte(strings.Repeat("k", 32))
	cert, key, ca := writeCA(t, dir, "good")
	good, err := loadRaftTLS(cert, key, ca)
	if err != nil {
		t.Fatal(err)
	}
	ecert, ekey, eca := writeCA(t, dir, "evil")
	evil, err := loadRaftTLS(ecert, ekey, eca)
	if err != nil {
		t.Fatal(err)
	}
	l, rejected, accepted := listenAuth(t, secret, good)
	addr := raft.ServerAddress(l.Addr().String())
	for name, d := range map[string]*authLayer{
		"other CA":            {secret: secret, tls: evil},
		"no TLS":              {secret: secret},
		"right CA, no secret": {secret: []byte(strings.Repeat("x", 32)), tls: good},
	} {
		if c, err := d.Dial(addr, 2*time.Second); err == nil {
			c.Close()
			t.Fatalf("%s: dial succeeded", name)
		}
		select {
		case <-rejected:
		case <-time.After(5 * time.Second):
			t.Fatalf("%s: the listener did not refuse the connection", name)
		}
	}
	ok := &authLayer{secret: secret, tls: good}
	c, err := ok.Dial(addr, 2*time.Second)
	if err != nil {
		t.Fatalf("dial with the cluster's certificate: %v", err)
	}
	defer c.Close()
	select {
	case sc := <-accepted:
		sc.Close()
	case <-time.After(5 * time.Second):
		t.Fatal("the authenticated connection was not accepted")
	}
	select {
	case <-accepted:
		t.Fatal("a refused connection reached Accept")
	default:
	}
	if _, err := loadRaftTLS(cert, key, filepath.Join(dir, "missing.pem")); err == nil || !strings.Contains(err.Error(), "RAFT_TLS_CA") {
		t.Fatalf("missing CA: %v", err)
	}
}
