package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"
)

// TestSIGKILLDuringFocusAssignment judges until focus assignment runs on fitted ratings,
// kills the server with SIGKILL while judges are asking for their next project, and
// restarts it twice: ratings and ranks are the ones journaled before the kill, every
// acknowledged assignment is still the judge's current project, and two replays of the
// same journal give byte-identical judge and project lists.
func TestSIGKILLDuringFocusAssignment(t *testing.T) {
	dir := t.TempDir()
	p := startBinary(t, dir)
	for i := 0; i < 30; i++ {
		p.must("POST", "/api/project/new", map[string]any{"name": fmt.Sprint("Project ", i), "description": "d"}, "")
	}
	for i := 0; i < 8; i++ {
		p.must("POST", "/api/judge/new", map[string]any{"name": fmt.Sprint("Judge ", i), "email": fmt.Sprintf("j%d@example.com", i), "notes": "", "no_send": true}, "")
	}
	var judges []struct {
		ID, Code string
	}
	json.Unmarshal(p.must("GET", "/api/judge/list", nil, ""), &judges)
	tokens := make([]string, len(judges))
	for i, j := range judges {
		var res struct{ Token string }
		json.Unmarshal(p.must("POST", "/api/judge/login", map[string]string{"code": j.Code}, "x"), &res)
		tokens[i] = res.Token
	}
	p.must("POST", "/api/admin/clock/unpause", nil, "")
	// Six rounds of fitted ratings, then focus mode decides (min_views 0: it decides from the first fit).
	for round := 0; round < 6; round++ {
		for _, tok := range tokens {
			p.must("POST", "/api/judge/next", nil, tok)
			p.must("POST", "/api/judge/finish", map[string]any{"starred": round%3 == 0}, tok)
			var seen []struct {
				ProjectID string `json:"project_id"`
			}
			json.Unmarshal(p.must("GET", "/api/judge/projects", nil, tok), &seen)
			rk := []string{}
			for k := len(seen) - 1; k >= 0; k-- { // any fixed order will do
				rk = append(rk, seen[k].ProjectID)
			}
			p.must("POST", "/api/judge/rank", map[string]any{"ranking": rk}, tok)
		}
	}
	// Wait until the background fit has caught up.
	ratings := func(p *proc) []byte { return p.must("GET", "/api/admin/results", nil, "") }
	p.ratingsCurrent()
	last := ratings(p)
	var res struct {
		Projects []struct {
			Rank   int     `json:"rank"`
			Rating float64 `json:"rating"`
		} `json:"projects"`
	}
	json.Unmarshal(last, &res)
	if len(res.Projects) != 30 || res.Projects[0].Rating == 0 {
		t.Fatalf("no fitted ratings before the kill: %s", last)
	}

	// Every judge asks for its next project at once; kill while they are in flight.
	var mu sync.Mutex
	acked := map[string]string{} // judge token -> project acknowledged
	var wg sync.WaitGroup
	for _, tok := range tokens {
		wg.Add(1)
		go func(tok string) {
			defer wg.Done()
			code, b, err := p.req("POST", "/api/judge/next", nil, tok)
			if err != nil || code != 200 {
				return
			}
			var nx struct {
				ProjectID string `json:"project_id"`
			}
			if json.Unmarshal(b, &nx) == nil && nx.ProjectID != "" {
				mu.Lock()
				acked[tok] = nx.ProjectID
				mu.Unlock()
			}
		}(tok)
	}
	// Kill once some are acknowledged and others may still be in flight.
	for deadline := time.Now().Add(3 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		mu.Lock()
		n := len(acked)
		mu.Unlock()
		if n >= 3 {
			break
		}
	}
	p.kill()
	wg.Wait()

	p2 := startBinary(t, dir)
	if got := ratings(p2); !bytes.Equal(got, last) {
		t.Errorf("results differ after SIGKILL restart: %s", resultsDiff(last, got))
	}
	for tok, pid := range acked {
		var j struct {
			Current *string `json:"current"`
		}
		json.Unmarshal(p2.must("GET", "/api/judge", nil, tok), &j)
		if j.Current == nil || *j.Current != pid {
			t.Errorf("acknowledged assignment %s lost: current %v", pid, j.Current)
		}
	}
	lists := []string{"/api/judge/list", "/api/project/list", "/api/admin/results"}
	p2.ratingsCurrent() // the start found the ratings current: no fit
	first := map[string][]byte{}
	for _, l := range lists {
		first[l] = p2.must("GET", l, nil, "")
	}
	p2.kill()
	p3 := startBinary(t, dir)
	for _, l := range lists {
		if got := p3.must("GET", l, nil, ""); !bytes.Equal(got, first[l]) {
			t.Errorf("%s differs between two replays: %s", l, resultsDiff(first[l], got))
		}
	}
	t.Logf("%d of %d assignments acknowledged before the kill", len(acked), len(tokens))
}

// resultsDiff names what differs between two JSON bodies: the first few differing
// elements of a list (or of an object's "projects" list), else both bodies whole. A
// failure under CI then shows the difference, not two cut-off bodies.
func resultsDiff(a, b []byte) string {
	list := func(body []byte) []json.RawMessage {
		var l []json.RawMessage
		if json.Unmarshal(body, &l) == nil {
			return l
		}
		var o struct{ Projects []json.RawMessage }
		json.Unmarshal(body, &o)
		return o.Projects
	}
	la, lb := list(a), list(b)
	if len(la) == 0 || len(la) != len(lb) {
		return fmt.Sprintf("(%d and %d elements)\nbefore %s\nafter  %s", len(la), len(lb), a, b)
	}
	var out bytes.Buffer
	n := 0
	for i := range la {
		if !bytes.Equal(la[i], lb[i]) && n < 5 {
			fmt.Fprintf(&out, "\n[%d] before %s\n[%d] after  %s", i, la[i], i, lb[i])
			n++
		}
	}
	if n == 0 {
		return fmt.Sprintf("elements equal, the rest differs:\nbefore %.600s\nafter  %.600s", a, b)
	}
	return out.String()
}
