package transport

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/gofiber/fiber/v2"
	"github.com/gofiber/fiber/v2/utils"

	"podium/engine"
)

// contentBody is one kind's encoded {"data": [...]} response, built once per content
// change and shared read-only by every request afterwards.
type contentBody struct {
	gen    uint64 // the generation of the kind this body was built for
	raw    []byte
	gz     []byte // gzip variant; nil when it would not be smaller than raw
	etag   string // strong ETag of raw
	etagGz string // strong ETag of gz (same content, other encoding)

	etagBytes, etagGzBytes []byte
}

// kindCache holds the current body of one content kind. Requests read it with two
// atomic loads; a build happens at most once at a time, and a body is published only
// when it is complete, so no request ever sees a half-built body.
type kindCache struct {
	build sync.Mutex
	gen   atomic.Uint64 // bumped after every durable change of the kind
	cur   atomic.Pointer[contentBody]
}

// contentCache keeps the encoded public content responses (docs/behaviour.md#public-content-api). Content handlers
// invalidate a kind after a content command is durable; the first request after that
// (or after a restart) rebuilds it: copy the views under the read lock, encode outside.
type contentCache struct {
	node  Node
	kinds [3]kindCache // indexed like engine.ContentKinds
}

func newContentCache(node Node) *contentCache { return &contentCache{node: node} }

// kindIndex returns the index of a content kind (-1 when unknown).
func kindIndex(kind string) int { return slices.Index(engine.ContentKinds, kind) }

// get returns the current body of kind k, building it when it is missing or stale.
// With wait false (public requests) a stale body is served while another request is
// rebuilding it, so a large re-encode never stalls the public API; with wait true the
// caller gets a body at least as new as the last invalidate.
func (cc *contentCache) get(k int, wait bool) (*contentBody, error) {
	kc := &cc.kinds[k]
	cur := kc.cur.Load()
	if cur != nil && cur.gen == kc.gen.Load() {
		return cur, nil
	}
	if cur != nil && !wait {
		if !kc.build.TryLock() {
			return cur, nil // being rebuilt: the previous complete body meanwhile
		}
	} else {
		kc.build.Lock()
	}
	defer kc.build.Unlock()
	// The generation is read before the state: a body labelled g holds the content of
	// generation g or newer, never older.
	gen := kc.gen.Load()
	if b := kc.cur.Load(); b != nil && b.gen == gen {
		return b, nil // another request built it while we waited
	}
	b, err := cc.encode(k)
	if err != nil {
		return nil, err
	}
	b.gen = gen
	kc.cur.Store(b)
	return b, nil
}

// invalidate marks kinds stale (call after a content command is durable) and rebuilds
// them before returning, so whoever made the change reads it back from every route.
func (cc *contentCache) invalidate(kinds ...int) {
	for _, k := range kinds {
		cc.kinds[k].gen.Add(1)
	}
	for _, k := range kinds {
		_, _ = cc.get(k, true) // an error here is reported again to the next request
	}
}

// encode copies one kind's wire view under the read lock and encodes it outside.
func (cc *contentCache) encode(k int) (*contentBody, error) {
	var data any
	cc.node.Read(func(st *engine.State) {
		switch engine.ContentKinds[k] {
		case engine.ContentSchedule:
			data = st.ScheduleView()
		case engine.ContentSponsors:
			data = st.SponsorsView()
		default:
			data = st.FAQView()
		}
	})
	raw, err := json.Marshal(struct {
		Data any `json:"data"`
	}{data})
	if err != nil {
		return nil, fmt.Errorf("encode %s: %w", engine.ContentKinds[k], err)
	}
	return newContentBody(raw, engine.ContentKinds[k])
}

// newContentBody prepares a cached response body: ETags and the gzip variant.
func newContentBody(raw []byte, name string) (*contentBody, error) {
	sum := sha256.Sum256(raw)
	tag := hex.EncodeToString(sum[:16])
	b := &contentBody{raw: raw, etag: `"` + tag + `"`, etagGz: `"` + tag + `-gzip"`}
	b.etagBytes, b.etagGzBytes = []byte(b.etag), []byte(b.etagGz)
	var buf bytes.Buffer
	buf.Grow(len(raw)/2 + 64)
	zw, _ := gzip.NewWriterLevel(&buf, gzip.DefaultCompression)
	if _, err := zw.Write(raw); err != nil {
		return nil, fmt.Errorf("gzip %s: %w", name, err)
	}
	if err := zw.Close(); err != nil {
		return nil, fmt.Errorf("gzip %s: %w", name, err)
	}
	if buf.Len() < len(raw) {
		b.gz = bytes.Clone(buf.Bytes())
	}
	return b, nil
}

// Header names and values set on every content response, as bytes so that a request
// costs no conversions or key normalisation. Names are in fasthttp's normalised form
// (SetCanonical stores them as given and Peek looks them up normalised).
var (
	hdrETag            = []byte("Etag")
	hdrCacheControl    = []byte(fiber.HeaderCacheControl)
	hdrVary            = []byte(fiber.HeaderVary)
	hdrContentEncoding = []byte(fiber.HeaderContentEncoding)
	valAcceptEncoding  = []byte(fiber.HeaderAcceptEncoding)
	valGzip            = []byte("gzip")
	valJSON            = []byte(fiber.MIMEApplicationJSON)
)

// send answers with a cached body: 304 when If-None-Match names it, otherwise the gzip
// variant when the client accepts it, else the plain JSON. Nothing is encoded here.
func (b *contentBody) send(c *fiber.Ctx, cacheControl []byte) error {
	req := &c.Request().Header
	useGz := b.gz != nil && acceptsGzip(utils.UnsafeString(req.Peek(fiber.HeaderAcceptEncoding)))
	etag := b.etagBytes
	if useGz {
		etag = b.etagGzBytes
	}
	h := &c.Response().Header
	h.SetCanonical(hdrETag, etag)
	h.SetCanonical(hdrCacheControl, cacheControl)
	h.SetCanonical(hdrVary, valAcceptEncoding)
	if inm := req.Peek(fiber.HeaderIfNoneMatch); len(inm) > 0 && b.matches(utils.UnsafeString(inm)) {
		c.Status(fiber.StatusNotModified)
		return nil
	}
	h.SetContentTypeBytes(valJSON)
	if useGz {
		h.SetCanonical(hdrContentEncoding, valGzip)
		c.Response().SetBodyRaw(b.gz) // shared, never modified
		return nil
	}
	c.Response().SetBodyRaw(b.raw)
	return nil
}

// matches reports whether an If-None-Match value names this content (either encoding;
// weak comparison as RFC 9110 §13.1.2 asks).
func (b *contentBody) matches(inm string) bool {
	for inm != "" {
		var t string
		t, inm, _ = strings.Cut(inm, ",")
		t = strings.TrimSpace(t)
		if t == "*" {
			return true
		}
		t = strings.TrimPrefix(t, "W/")
		if t == b.etag || t == b.etagGz {
			return true
		}
	}
	return false
}

// acceptsGzip reports whether an Accept-Encoding value allows gzip: "gzip" (or
// "x-gzip") with q > 0, or else "*" with q > 0.
func acceptsGzip(ae string) bool {
	gzipQ, starQ := -1.0, -1.0
	for ae != "" {
		var part string
		part, ae, _ = strings.Cut(ae, ",")
		name, params, _ := strings.Cut(part, ";")
		name = strings.ToLower(strings.TrimSpace(name))
		if name != "gzip" && name != "x-gzip" && name != "*" {
			continue
		}
		q := 1.0
		for params != "" {
			var p string
			p, params, _ = strings.Cut(params, ";")
			k, v, ok := strings.Cut(strings.TrimSpace(p), "=")
			if ok && strings.EqualFold(strings.TrimSpace(k), "q") {
				if f, err := strconv.ParseFloat(strings.TrimSpace(v), 64); err == nil {
					q = f
				}
			}
		}
		if name == "*" {
			starQ = max(starQ, q)
		} else {
			gzipQ = max(gzipQ, q)
		}
	}
	if gzipQ >= 0 {
		return gzipQ > 0
	}
	return starQ > 0
}
