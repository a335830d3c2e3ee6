package transport

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"podium/engine"
	"podium/persist/worker"
)

// kickCounter is an Outbox that counts its kicks.
type kickCounter struct{ n atomic.Int64 }

func (k *kickCounter) Kick() { k.n.Add(1) }

// lateOutbox hands the server's kicks to an outbox started after the server (the outbox
// needs the server's node).
type lateOutbox struct{ ob atomic.Pointer[worker.Outbox] }

func (l *lateOutbox) Kick() {
	if ob := l.ob.Load(); ob != nil {
		ob.Kick()
	}
}

// startServerWithOutbox is startServer with the mail outbox running beside it, as
// cmd/podium runs it; without SMTP settings every mail is recorded as not sent.
func startServerWithOutbox(t *testing.T) *testServer {
	t.Helper()
	late := &lateOutbox{}
	ts := startServerOpts(t, nil, WithOutbox(late))
	ob := worker.NewOutbox(worker.SMTPConfig{}, "", nil, ts.Node, zerolog.Nop())
	go ob.Run()
	late.ob.Store(ob)
	t.Cleanup(func() { // before the server stops (cleanups run last first)
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = ob.Stop(ctx)
	})
	return ts
}

// mailOf returns the state of the login-code mail of the judge with that email, as the
// judge list shows it ("" when the judge has none).
func (ts *testServer) mailOf(email string) string {
	ts.t.Helper()
	var list []struct {
		Email string
		Mail  *struct{ Status string }
	}
	ts.must(200, "GET", "/api/judge/list", nil, asAdmin, &list)
	for _, j := range list {
		if j.Email == email && j.Mail != nil {
			return j.Mail.Status
		}
	}
	return ""
}

// TestRoutesQueueMailAndKickOutbox: a new judge, a CSV import and a QR signup queue a
// login-code mail in the state and kick the outbox (the worker of package
// persist/worker sends it); noSend queues nothing; a resend queues the mail again and
// is refused while the mail is being sent or for an unknown judge.
func TestRoutesQueueMailAndKickOutbox(t *testing.T) {
	k := &kickCounter{}
	ts := startServerOpts(t, nil, WithOutbox(k))
	kicked := func(what string, want int64) {
		t.Helper()
		if got := k.n.Load(); got != want {
			t.Fatalf("%s: %d kicks, want %d", what, got, want)
		}
	}
	pending := func(emails ...string) {
		t.Helper()
		for _, e := range emails {
			if st := ts.mailOf(e); st != engine.MailPending {
				t.Fatalf("mail to %s is %q, want pending", e, st)
			}
		}
	}
	ts.must(200, "POST", "/api/judge/new", map[string]any{"name": "Ada", "email": "ada@example.com"}, asAdmin, nil)
	pending("ada@example.com")
	kicked("new judge", 1)

	ts.mustUploadCSV(200, "/api/judge/csv", []byte("Name,Email\nNo Mail,nomail@example.com\n"), map[string]string{"hasHeader": "1", "noSend": "true"}, nil)
	ts.must(200, "POST", "/api/judge/new", map[string]any{"name": "Eve", "email": "eve@example.com", "no_send": true}, asAdmin, nil)
	for _, e := range []string{"nomail@example.com", "eve@example.com"} {
		if st := ts.mailOf(e); st != "" {
			t.Fatalf("noSend judge %s has a mail %q", e, st)
		}
	}
	ts.mustUploadCSV(200, "/api/judge/csv", []byte("Bob,bob@example.com\nCleo,cleo@example.com\n"), nil, nil)
	pending("bob@example.com", "cleo@example.com")
	kicked("CSV import", 2)

	var q qrCodeResp
	ts.must(200, "POST", "/api/admin/qr", nil, asAdmin, &q)
	ts.must(200, "POST", "/api/qr/add", map[string]string{"name": "Dee", "email": "dee@example.com", "code": *q.QRCode}, anon, nil)
	pending("dee@example.com")
	kicked("QR signup", 3)

	// Resend: Ada's mail was skipped; the organiser queues it again.
	var ada, bob string
	for _, j := range ts.judgeList() {
		switch j.Email {
		case "ada@example.com":
			ada = j.ID
		case "bob@example.com":
			bob = j.ID
		}
	}
	adaID, _ := engine.ParseID(ada)
	bobID, _ := engine.ParseID(bob)
	ctx := context.Background()
	if _, err := ts.Node.Submit(ctx, engine.System, &engine.EmailSkipped{Judges: []engine.ID{adaID}}); err != nil {
		t.Fatal(err)
	}
	if _, err := ts.Node.Submit(ctx, engine.System, &engine.ClaimMail{Judges: []engine.ID{bobID}, Claim: "outbox"}); err != nil {
		t.Fatal(err)
	}
	ts.must(404, "POST", "/api/judge/email", map[string]any{"items": []string{ada, "000000000000000000000abc"}}, asAdmin, nil)
	ts.must(400, "POST", "/api/judge/email", map[string]any{"items": []string{"nope"}}, asAdmin, nil)
	ts.must(409, "POST", "/api/judge/email", map[string]any{"items": []string{bob}}, asAdmin, nil) // being sent
	if st := ts.mailOf("ada@example.com"); st != engine.MailSkipped {
		t.Fatalf("refused resends changed Ada's mail to %q", st)
	}
	ts.must(200, "POST", "/api/judge/email", map[string]any{"items": []string{ada}}, asAdmin, nil)
	pending("ada@example.com")
	kicked("resend", 4)
}
