package transport

import (
	"bytes"
	"strings"
	"testing"

	qrcode "github.com/skip2/go-qrcode"
)

// Imports and QR codes with tracks (tracks and ignore_tracks are set through the
// options routes).

func TestImportJudgesWithTracks(t *testing.T) {
	ts := startServer(t)
	ts.must(200, "POST", "/api/admin/tracks", map[string]any{"tracks": []string{"AI", "Web"}}, asAdmin, nil)
	csv := "name,email,track,notes\n" +
		"Ann,ann@example.com,AI,robots\n" +
		"Ben,ben@example.com,web,\n" + // another case: stored as the track's own spelling
		"Cat,cat@example.com,,\n" +
		"Dan,dan@example.com,  AI  ,\n"
	var res importResult
	ts.mustUploadCSV(200, "/api/judge/csv", []byte(csv), map[string]string{"hasHeader": "1", "noSend": "1"}, &res)
	if res.Added != 4 {
		t.Fatalf("added %d", res.Added)
	}
	js := ts.judgeList()
	want := []struct{ name, track string }{{"Ann", "AI"}, {"Ben", "Web"}, {"Cat", ""}, {"Dan", "AI"}}
	for i, w := range want {
		if js[i].Name != w.name || js[i].Track != w.track {
			t.Errorf("judge %d = %+v, want %+v", i, js[i], w)
		}
	}
	if js[0].Notes != "robots" {
		t.Errorf("notes %q", js[0].Notes)
	}
	code, b := ts.uploadCSV("/api/judge/csv", []byte("Eve,eve@example.com,Web\nFay,fay@example.com,Hardware\n"), map[string]string{"noSend": "1"}, asAdmin)
	if code != 400 || !strings.Contains(errorText(b), `row 2: track "Hardware" does not exist`) {
		t.Fatalf("unknown track: %d %s", code, b)
	}
	if n := len(ts.judgeList()); n != 4 {
		t.Fatalf("refused import added judges: %d", n)
	}
}

func TestImportSkipsIgnoredTracks(t *testing.T) {
	ts := startServer(t)
	ts.must(200, "POST", "/api/admin/options", map[string]any{"ignore_tracks": []string{"Ignored", "Sponsor Prize: Cloud"}}, asAdmin, nil)
	var res importResult
	ts.mustUploadCSV(200, "/api/project/csv", csvFixture(t, "projects.csv"), map[string]string{"hasHeader": "1"}, &res)
	if res.Added != 3 || res.Skipped == nil || *res.Skipped != 1 {
		t.Fatalf("projects.csv: %+v", res)
	}
	// Two Drafts and one project in an ignored track.
	ts.mustUploadCSV(200, "/api/project/submissions", csvFixture(t, "submissions.csv"), nil, &res)
	if res.Added != 3 || res.Skipped == nil || *res.Skipped != 3 {
		t.Fatalf("submissions.csv: %+v", res)
	}
	names := []string{}
	for _, p := range ts.projectList() {
		names = append(names, p.Name)
	}
	if got := strings.Join(names, "|"); got != "Rocket|Boat|Minimal|BikeFinder|Bonjour Bot|Apollo Guidance" {
		t.Fatalf("projects %s", got)
	}
}

func TestQRTrack(t *testing.T) {
	ts := startServer(t, func(c *Config) { c.PublicURL = "https://podium.example.com/" })
	ts.must(200, "POST", "/api/admin/tracks", map[string]any{"tracks": []string{"AI Hack", "Web"}}, asAdmin, nil)
	var q qrCodeResp
	ts.must(200, "GET", "/api/admin/qr/AI%20Hack", nil, asAdmin, &q)
	if *q.QRCode != "" {
		t.Fatalf("initial track code %q", *q.QRCode)
	}
	ts.must(404, "GET", "/api/admin/qr/AI%20Hack.png", nil, asAdmin, nil)
	ts.must(401, "POST", "/api/admin/qr/AI%20Hack", nil, anon, nil)
	ts.must(200, "POST", "/api/admin/qr/AI%20Hack", nil, asAdmin, &q)
	secret := *q.QRCode
	urlSafeSecret(t, secret)
	var got qrCodeResp
	ts.must(200, "GET", "/api/admin/qr/AI%20Hack", nil, asAdmin, &got)
	if *got.QRCode != secret {
		t.Fatalf("GET %q, POST %q", *got.QRCode, secret)
	}
	ts.must(200, "GET", "/api/admin/qr", nil, asAdmin, &got)
	if *got.QRCode != "" {
		t.Fatal("a track code became the general code")
	}
	img := ts.fetchPNG("/api/admin/qr/AI%20Hack.png")
	want, _ := qrcode.Encode("https://podium.example.com/join?code="+secret+"&track=AI+Hack", qrcode.Medium, 512)
	if !bytes.Equal(img, want) {
		t.Error("track PNG does not encode the join link with the track")
	}

	var ok qrOKResp
	ts.must(200, "POST", "/api/qr/check/AI%20Hack", map[string]string{"code": secret}, anon, &ok)
	if ok.OK != 1 {
		t.Fatal("track code did not match its track")
	}
	for _, path := range []string{"/api/qr/check", "/api/qr/check/Web"} {
		ts.must(200, "POST", path, map[string]string{"code": secret}, anon, &ok)
		if ok.OK != 0 {
			t.Fatalf("track code matched %s", path)
		}
	}
	// Track signup makes a track judge; the track code alone is not a general code.
	ts.must(401, "POST", "/api/qr/add", map[string]string{"name": "NoTrack", "email": "nt@example.com", "code": secret}, anon, nil)
	ts.must(401, "POST", "/api/qr/add", map[string]string{"name": "Other", "email": "o@example.com", "code": secret, "track": "Web"}, anon, nil)
	ts.must(200, "POST", "/api/qr/add", map[string]string{"name": "Tia", "email": "tia@example.com", "code": secret, "track": "AI Hack"}, anon, &ok)
	js := ts.judgeList()
	if last := js[len(js)-1]; last.Name != "Tia" || last.Track != "AI Hack" || last.Code != ok.Code {
		t.Fatalf("track judge %+v", last)
	}
	ts.must(409, "POST", "/api/qr/add", map[string]string{"name": "Tia", "email": "tia@example.com", "code": secret, "track": "AI Hack"}, anon, nil)

	// Removing the track retires its code.
	ts.must(200, "POST", "/api/admin/tracks", map[string]any{"tracks": []string{"Web"}}, asAdmin, nil)
	ts.must(200, "POST", "/api/qr/check/AI%20Hack", map[string]string{"code": secret}, anon, &ok)
	if ok.OK != 0 {
		t.Fatal("code of a removed track still matches")
	}
	ts.must(404, "GET", "/api/admin/qr/AI%20Hack", nil, asAdmin, nil)
}

func TestQRThrottleFollowsOptions(t *testing.T) {
	ts := startServer(t)
	ts.must(200, "POST", "/api/admin/max-reqs", map[string]any{"max_req_per_min": 2}, asAdmin, nil)
	body := map[string]string{"code": "whatever-whatever"}
	ts.must(200, "POST", "/api/qr/check", body, anon, nil)
	ts.must(200, "POST", "/api/qr/check", body, anon, nil)
	ts.must(429, "POST", "/api/qr/check", body, anon, nil)
	ts.must(200, "POST", "/api/admin/block-reqs", map[string]any{"block_reqs": true}, asAdmin, nil)
	ts.must(200, "POST", "/api/admin/max-reqs", map[string]any{"max_req_per_min": 1000}, asAdmin, nil)
	ts.must(429, "POST", "/api/qr/add", map[string]string{"name": "A", "email": "a@example.com", "code": "x"}, anon, nil)
}
