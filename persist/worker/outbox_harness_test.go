package worker

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"podium/engine"
)

// outboxTestNode is the node of the outbox tests: an engine in memory that applies each
// command at once. An outbox started again on the same outboxTestNode sees the state the
// previous one left, as after a restart.
type outboxTestNode struct {
	t    testing.TB
	mu   sync.Mutex // one writer, as in persist
	eng  *engine.Engine
	kick func() // the running outbox's Kick, called when mails are queued (as routes do)
}

func newOutboxTestNode(t testing.TB) *outboxTestNode { return &outboxTestNode{t: t, eng: engine.New()} }

func (n *outboxTestNode) Read(fn func(s *engine.State)) { n.eng.Read(fn) }
func (n *outboxTestNode) Ready() bool                   { return true }

func (n *outboxTestNode) Submit(_ context.Context, actor engine.Actor, cmd engine.Command) (any, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	res, _, err := n.eng.Apply(&engine.Envelope{Time: time.Now().UnixMilli(), Seed: rand.Uint64(), Actor: actor, Cmd: cmd})
	return res, err
}

// must submits cmd as the admin and fails the test when it is refused.
func (n *outboxTestNode) must(cmd engine.Command) any {
	n.t.Helper()
	res, err := n.Submit(context.Background(), engine.Admin, cmd)
	if err != nil {
		n.t.Fatalf("%s: %v", cmd.Kind(), err)
	}
	return res
}

// addJudges creates judges from "Name <email>" pairs, queueing their login-code mails
// when mail is set (as POST /api/judge/new and the CSV import do), and returns their ids.
func (n *outboxTestNode) addJudges(mail bool, judges ...[2]string) []engine.ID {
	n.t.Helper()
	cmd := &engine.CreateJudges{Mail: mail}
	for i, j := range judges {
		cmd.Judges = append(cmd.Judges, engine.NewJudge{Name: j[0], Email: j[1]})
		cmd.Codes = append(cmd.Codes, fmt.Sprintf("%08d", 10_000_000+rand.IntN(80_000_000)+i))
	}
	var ids []engine.ID
	for _, c := range n.must(cmd).([]engine.CreatedJudge) {
		ids = append(ids, c.ID)
	}
	if mail && n.kick != nil {
		n.kick()
	}
	return ids
}

// judge returns the id and login code of the judge with that email.
func (n *outboxTestNode) judge(email string) (engine.ID, string) {
	n.t.Helper()
	var id engine.ID
	var code string
	n.Read(func(st *engine.State) {
		for jid, j := range st.Judges {
			if j.Email == email {
				id, code = jid, j.Code
			}
		}
	})
	if code == "" {
		n.t.Fatalf("no judge %s", email)
	}
	return id, code
}

// loginCodeOf returns the login code of the judge with that email.
func (n *outboxTestNode) loginCodeOf(email string) string {
	_, code := n.judge(email)
	return code
}

// mailOf returns the state of the login-code mail of the judge with that email, as the
// judge list shows it ("" when the judge has none).
func (n *outboxTestNode) mailOf(email string) (status, reason string) {
	id, _ := n.judge(email)
	n.Read(func(st *engine.State) {
		if v := st.MailViewOf(id); v != nil {
			status, reason = v.Status, v.Reason
		}
	})
	return status, reason
}

// awaitMail waits until the judge's mail has status (the test fails after 20 s).
func (n *outboxTestNode) awaitMail(email, status string) (reason string) {
	n.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		got, reason := n.mailOf(email)
		if got == status {
			return reason
		}
		if time.Now().After(deadline) {
			n.t.Fatalf("mail to %s is %q, want %q", email, got, status)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// auditLines returns the audit log lines that contain sub.
func (n *outboxTestNode) auditLines(sub string) []string {
	var out []string
	n.Read(func(st *engine.State) {
		for _, l := range st.Log {
			if strings.Contains(l, sub) {
				out = append(out, l)
			}
		}
	})
	return out
}

// noCodesInAudit fails when any login code appears in the audit log.
func (n *outboxTestNode) noCodesInAudit() {
	n.t.Helper()
	n.Read(func(st *engine.State) {
		for _, l := range st.Log {
			for _, j := range st.Judges {
				if strings.Contains(l, j.Code) {
					n.t.Errorf("login code in audit line %q", l)
				}
			}
		}
	})
}

// startOutbox runs an outbox on node with smtp's settings (nil: no SMTP server), obs
// (nil: none), attempts and backoff, as cmd/podium does; it stops at the end of the
// test, or earlier through its stop function. mod changes the outbox before it runs.
func startOutbox(t *testing.T, node *outboxTestNode, smtp *smtpServer, obs MailObserver, attempts int, backoff time.Duration, mod ...func(*Outbox)) (o *Outbox, stop func()) {
	t.Helper()
	var cfg SMTPConfig
	if smtp != nil {
		cfg = smtp.settings()
	}
	o = NewOutbox(cfg, "https://podium.example.com", obs, node, zerolog.Nop())
	o.attempts, o.backoff = attempts, backoff
	for _, m := range mod {
		m(o)
	}
	node.kick = o.Kick
	go o.Run()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			_ = o.Stop(ctx)
		})
	}
	t.Cleanup(stop)
	return o, stop
}
