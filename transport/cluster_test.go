package transport

import "testing"

// A single node answers the cluster routes as standalone and refuses membership
// changes, forwarded changes and cluster restores without changing anything.
func TestClusterRoutesStandalone(t *testing.T) {
	ts := startServer(t)
	var st struct {
		State string `json:"state"`
	}
	ts.must(200, "GET", "/api/admin/cluster", nil, asAdmin, &st)
	if st.State != "standalone" {
		t.Fatalf("state %q, want standalone", st.State)
	}
	ts.must(401, "GET", "/api/admin/cluster", nil, anon, nil)
	ts.must(409, "POST", "/api/admin/cluster/nodes", map[string]string{"id": "b", "raft_addr": "127.0.0.1:7002", "http_url": "http://127.0.0.1:8082"}, asAdmin, nil)
	ts.must(400, "POST", "/api/admin/cluster/nodes", map[string]string{"id": "b"}, asAdmin, nil)
	ts.must(409, "DELETE", "/api/admin/cluster/nodes/b", nil, asAdmin, nil)
	ts.must(409, "POST", "/api/admin/cluster/restore", map[string]string{"backup": "x"}, asAdmin, nil)
	if code, body := ts.do("POST", "/api/cluster/forward", map[string]string{"op": "apply"}, anon); code != 404 {
		t.Fatalf("forward on a single node: %d %s", code, body)
	}
}
