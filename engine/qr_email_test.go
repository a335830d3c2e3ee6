package engine

import (
	"strings"
	"testing"
)

func TestSetQRCode(t *testing.T) {
	f := newFixture(t)
	ref := f.s().Options.Ref
	secret := "abcdefghijklmnop_-09"
	f.must(&SetQRCode{Secret: secret})
	if f.s().Options.QRCode != secret || f.s().QRSecret("") != secret || f.s().Options.Ref != ref+1 {
		t.Fatalf("options %+v", f.s().Options)
	}
	f.fail(&SetQRCode{Secret: "short"}, KindInvalid)
	f.fail(&SetQRCode{Secret: "has spaces in it ok?"}, KindInvalid)
	f.fail(&SetQRCode{Secret: strings.Repeat("a", 257)}, KindInvalid)
	f.fail(&SetQRCode{Track: "AI", Secret: secret}, KindNotFound)

	// Tracks are set by the options commands; here directly.
	f.s().Options.Tracks = []string{"AI", "Web"}
	f.s().Options.TrackViews = []int{3, 3}
	f.must(&SetQRCode{Track: "AI", Secret: "trackSecret-0123456789"})
	if f.s().QRSecret("AI") != "trackSecret-0123456789" || f.s().QRSecret("Web") != "" || f.s().QRSecret("") != secret {
		t.Fatalf("track secrets %v", f.s().Options.TrackQRCodes)
	}
	// A secret of a track that was removed no longer counts.
	f.s().Options.Tracks = []string{"Web"}
	if f.s().QRSecret("AI") != "" {
		t.Fatal("secret of a removed track still returned")
	}
	for _, l := range f.s().Log {
		if strings.Contains(l, secret) || strings.Contains(l, "trackSecret") {
			t.Fatalf("secret in audit line %q", l)
		}
	}
}

func TestEmailSkippedOnlyLogs(t *testing.T) {
	f := newFixture(t)
	ids := f.judges("ada", "bob")
	before := len(f.s().Log)
	judges := len(f.s().Judges)
	evs := f.must(&EmailSkipped{Recipients: []MailRecipient{
		{Judge: ids[0], Name: "ada", Email: "ada@example.com"},
		{Judge: ids[1], Name: "bob", Email: "bob@example.com"},
	}})
	lines := f.s().Log[before:]
	if len(lines) != 2 || !strings.Contains(lines[0], "login code email to ada <ada@example.com> skipped: SMTP is not configured") ||
		!strings.Contains(lines[1], "bob@example.com") || !strings.Contains(lines[0], "[ADMIN]") {
		t.Fatalf("lines %q", lines)
	}
	if len(f.s().Judges) != judges || len(eventsOf(evs, EvLog)) != 2 || len(evs) != 2 {
		t.Fatalf("EmailSkipped changed more than the log: %d events", len(evs))
	}
	for _, l := range lines {
		if strings.Contains(l, f.s().Judges[ids[0]].Code) {
			t.Fatalf("login code in %q", l)
		}
	}
	f.fail(&EmailSkipped{}, KindInvalid)
}
