package transport

import (
	"bytes"
	"image/png"
	"io"
	"net/http"
	"strings"
	"testing"

	qrcode "github.com/skip2/go-qrcode"

	"podium/engine"
)

type qrCodeResp struct {
	QRCode *string `json:"qr_code"`
}

type qrOKResp struct {
	OK   int    `json:"ok"`
	Code string `json:"code"`
}

func urlSafeSecret(t *testing.T, s string) {
	t.Helper()
	if len(s) < 16 {
		t.Fatalf("secret %q shorter than 16", s)
	}
	for _, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			t.Fatalf("secret %q is not URL-safe", s)
		}
	}
}

// fetchPNG downloads a QR image as admin and decodes it.
func (ts *testServer) fetchPNG(path string) []byte {
	ts.t.Helper()
	resp, b := ts.getExport(path)
	if ct := resp.Header.Get("Content-Type"); ct != "image/png" {
		ts.t.Errorf("%s Content-Type %q", path, ct)
	}
	img, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		ts.t.Fatalf("%s is not a PNG: %v", path, err)
	}
	if r := img.Bounds(); r.Dx() < 100 || r.Dx() != r.Dy() {
		ts.t.Errorf("%s image is %v", path, r)
	}
	return b
}

func TestQRGeneral(t *testing.T) {
	ts := startServer(t, func(c *Config) { c.PublicURL = "https://podium.example.com" })
	_, jcode := ts.addJudge("Existing", "existing@example.com", "")
	tok := ts.login(jcode)

	// Nothing generated yet: "" and an empty code never matches.
	var q qrCodeResp
	ts.must(200, "GET", "/api/admin/qr", nil, asAdmin, &q)
	if q.QRCode == nil || *q.QRCode != "" {
		t.Fatalf("initial qr_code %v", q.QRCode)
	}
	var ok qrOKResp
	ts.must(200, "POST", "/api/qr/check", map[string]string{"code": ""}, anon, &ok)
	if ok.OK != 0 {
		t.Fatal("empty code matched the empty secret")
	}
	ts.must(401, "POST", "/api/qr/add", map[string]string{"name": "X", "email": "x@example.com", "code": ""}, anon, nil)
	ts.must(404, "GET", "/api/admin/qr.png", nil, asAdmin, nil)

	// Only admins generate and read the secret.
	for _, a := range []auth{anon, asJudge(tok)} {
		ts.must(401, "POST", "/api/admin/qr", nil, a, nil)
		ts.must(401, "GET", "/api/admin/qr", nil, a, nil)
		ts.must(401, "GET", "/api/admin/qr.png", nil, a, nil)
	}
	ts.must(200, "POST", "/api/admin/qr", nil, asAdmin, &q)
	secret := *q.QRCode
	urlSafeSecret(t, secret)
	ts.must(200, "GET", "/api/admin/qr", nil, asAdmin, &q)
	if *q.QRCode != secret {
		t.Fatalf("GET returned %q, POST %q", *q.QRCode, secret)
	}

	// The PNG encodes the join link.
	img := ts.fetchPNG("/api/admin/qr.png")
	want, err := qrcode.Encode("https://podium.example.com/join?code="+secret, qrcode.Medium, 512)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(img, want) {
		t.Error("PNG does not encode the join link")
	}

	ts.must(200, "POST", "/api/qr/check", map[string]string{"code": secret}, anon, &ok)
	if ok.OK != 1 {
		t.Fatal("right code did not match")
	}
	ts.must(200, "POST", "/api/qr/check", map[string]string{"code": secret + "x"}, anon, &ok)
	if ok.OK != 0 {
		t.Fatal("wrong code matched")
	}
	ts.must(400, "POST", "/api/qr/check", map[string]string{}, anon, nil)
	ts.must(400, "POST", "/api/qr/check", "not json", anon, nil)

	// Self-signup.
	ts.must(401, "POST", "/api/qr/add", map[string]string{"name": "Eve", "email": "eve@example.com", "code": "nope-nope-nope-nope"}, anon, nil)
	ts.must(200, "POST", "/api/qr/add", map[string]string{"name": "Quinn", "email": "quinn@example.com", "notes": "scanned", "code": secret}, anon, &ok)
	if ok.OK != 1 || len(ok.Code) != 8 {
		t.Fatalf("add answered %+v", ok)
	}
	js := ts.judgeList()
	last := js[len(js)-1]
	if last.Name != "Quinn" || last.Email != "quinn@example.com" || last.Notes != "scanned" || last.Code != ok.Code || last.Track != "" {
		t.Fatalf("new judge %+v", last)
	}
	ts.login(ok.Code) // the returned code logs in
	ts.must(409, "POST", "/api/qr/add", map[string]string{"name": "Quinn again", "email": "QUINN@example.com", "code": secret}, anon, nil)
	ts.must(409, "POST", "/api/qr/add", map[string]string{"name": "Dup", "email": "existing@example.com", "code": secret}, anon, nil)
	ts.must(400, "POST", "/api/qr/add", map[string]string{"name": "Bad", "email": "not-an-email", "code": secret}, anon, nil)
	ts.must(400, "POST", "/api/qr/add", map[string]string{"email": "noname@example.com", "code": secret}, anon, nil)
	ts.must(400, "POST", "/api/qr/add", map[string]string{"name": "No code", "email": "nocode@example.com"}, anon, nil)
	// A track that does not exist never matches; the general secret still makes a
	// general judge.
	ts.must(200, "POST", "/api/qr/check/NoSuchTrack", map[string]string{"code": secret}, anon, &ok)
	if ok.OK != 0 {
		t.Fatal("unknown track matched")
	}
	ts.must(200, "POST", "/api/qr/add", map[string]string{"name": "Gen", "email": "gen@example.com", "code": secret, "track": "NoSuchTrack"}, anon, &ok)
	js = ts.judgeList()
	if last := js[len(js)-1]; last.Name != "Gen" || last.Track != "" {
		t.Fatalf("general signup with a track name: %+v", last)
	}

	// A new secret replaces the old one.
	ts.must(200, "POST", "/api/admin/qr", nil, asAdmin, &q)
	if *q.QRCode == secret {
		t.Fatal("secret did not change")
	}
	ts.must(200, "POST", "/api/qr/check", map[string]string{"code": secret}, anon, &ok)
	if ok.OK != 0 {
		t.Fatal("old secret still matches")
	}
	ts.must(401, "POST", "/api/qr/add", map[string]string{"name": "Late", "email": "late@example.com", "code": secret}, anon, nil)

	// Tracks must exist.
	ts.must(404, "POST", "/api/admin/qr/NoSuchTrack", nil, asAdmin, nil)
	ts.must(404, "GET", "/api/admin/qr/NoSuchTrack", nil, asAdmin, nil)
	ts.must(404, "GET", "/api/admin/qr/NoSuchTrack.png", nil, asAdmin, nil)

	// The secret is never in the audit log.
	var lines string
	ts.Node.Read(func(st *engine.State) { lines = strings.Join(st.Log, "\n") })
	if !strings.Contains(lines, "generated a new QR join code") {
		t.Fatalf("no audit line for the QR code:\n%s", lines)
	}
	if strings.Contains(lines, secret) || strings.Contains(lines, *q.QRCode) {
		t.Fatal("QR secret in the audit log")
	}
}

func TestQRSurvivesRestart(t *testing.T) {
	ts := startServer(t)
	var q qrCodeResp
	ts.must(200, "POST", "/api/admin/qr", nil, asAdmin, &q)
	dir := ts.Dir
	ts.Stop()
	ts2 := startServerIn(t, dir)
	var q2 qrCodeResp
	ts2.must(200, "GET", "/api/admin/qr", nil, asAdmin, &q2)
	if *q2.QRCode != *q.QRCode {
		t.Fatalf("after restart %q, before %q", *q2.QRCode, *q.QRCode)
	}
}

func TestQRThrottled(t *testing.T) {
	ts := startServer(t)
	body := map[string]string{"code": "whatever-whatever"}
	// The default is 100 requests per IP per minute, shared by the QR routes.
	for i := 0; i < 100; i++ {
		path := "/api/qr/check"
		if i%2 == 1 {
			path = "/api/qr/check/SomeTrack"
		}
		ts.must(200, "POST", path, body, anon, nil)
	}
	req, _ := http.NewRequest("POST", ts.URL+"/api/qr/add", strings.NewReader(`{"name":"A","email":"a@example.com","code":"x"}`))
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 429 || resp.Header.Get("Retry-After") == "" || !strings.Contains(string(b), "error") {
		t.Fatalf("101st QR request: %d %q %s", resp.StatusCode, resp.Header.Get("Retry-After"), b)
	}
	ts.must(429, "POST", "/api/qr/check", body, anon, nil)
	// Judge login has its own budget.
	ts.must(400, "POST", "/api/judge/login", map[string]string{"code": "00000000"}, anon, nil)
}
