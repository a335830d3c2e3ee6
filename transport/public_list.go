package transport

import (
	"encoding/json"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gofiber/fiber/v2"

	"podium/engine"
)

// GET /api/project/list/public needs no auth and is large (22 MB at 10,000 projects
// with long descriptions), so it is encoded once per change of the listing, like the
// content API (docs/behaviour.md#public-content-api, #operations): every request shares one body, gzip variant and ETag, and
// If-None-Match gets a 304.

// publicListMaxAge bounds how long a body is trusted without a rebuild. The listing's
// version (State.PublicListChangedAt) restarts when the state is reloaded after a journal
// failure, so a version seen before could in theory name other content; a rebuild after
// this long (same content: same ETag) closes that gap.
const publicListMaxAge = time.Minute

// publicListCacheControl: browsers revalidate every time (a 304 costs nothing).
var publicListCacheControl = []byte("no-cache")

// publicList holds the encoded public project listing.
type publicList struct {
	node  Node
	build sync.Mutex
	cur   atomic.Pointer[publicBody]
}

type publicBody struct {
	*contentBody
	version uint64
	built   time.Time
}

// get returns a body for the current listing. While one request rebuilds it, others get
// the previous body unless the listing changed (then they wait for the new one, so a
// change is visible to everyone once it is acknowledged).
func (pl *publicList) get() (*contentBody, error) {
	var version uint64
	pl.node.Read(func(st *engine.State) { version = st.PublicListChangedAt() })
	cur := pl.cur.Load()
	if cur != nil && cur.version == version {
		if time.Since(cur.built) < publicListMaxAge || !pl.build.TryLock() {
			return cur.contentBody, nil
		}
	} else {
		pl.build.Lock()
	}
	defer pl.build.Unlock()
	if b := pl.cur.Load(); b != nil && b.version >= version && b != cur {
		return b.contentBody, nil // built by another request while we waited
	}
	b, err := pl.encode()
	if err != nil {
		return nil, err
	}
	pl.cur.Store(b)
	return b.contentBody, nil
}

// encode copies the listing under the read lock and encodes it outside.
func (pl *publicList) encode() (*publicBody, error) {
	var out []engine.PublicProject
	var version uint64
	pl.node.Read(func(st *engine.State) {
		version = st.PublicListChangedAt()
		ps := st.ProjectsByLocation()
		out = make([]engine.PublicProject, 0, len(ps))
		for _, p := range ps {
			if p.Active {
				out = append(out, p.Public())
			}
		}
	})
	raw, err := json.Marshal(out)
	if err != nil {
		return nil, fmt.Errorf("encode public projects: %w", err)
	}
	out = nil
	cb, err := newContentBody(raw, "public projects")
	if err != nil {
		return nil, err
	}
	return &publicBody{contentBody: cb, version: version, built: time.Now()}, nil
}

func (s *Server) listPublicProjects(c *fiber.Ctx) error {
	b, err := s.publicList.get()
	if err != nil {
		return err
	}
	return b.send(c, publicListCacheControl)
}
