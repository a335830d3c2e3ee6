package transport

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"io/fs"
	"path"
	"slices"
	"strings"
	"sync"

	"github.com/gofiber/fiber/v2"
)

// webFiles holds the judge app, the admin dashboard and the expo display: plain HTML,
// CSS and JavaScript modules, served as they are (no build step).
//
//go:embed web
var webFiles embed.FS

// webAsset is one embedded file, prepared once at startup.
type webAsset struct {
	body  []byte
	gz    []byte // gzip-compressed body, nil when compression does not pay
	ctype string
	etag  string
}

// webContentTypes lists the types we serve; the system MIME table is not consulted so
// that the answer is the same on every machine.
var webContentTypes = map[string]string{
	".html": "text/html; charset=utf-8",
	".js":   "text/javascript; charset=utf-8",
	".css":  "text/css; charset=utf-8",
	".svg":  "image/svg+xml",
	".png":  "image/png",
	".ico":  "image/x-icon",
	".json": "application/json",
	// The judge app's manifest (docs/behaviour.md#judge-app).
	".webmanifest": "application/manifest+json",
}

// webCSP keeps the pages to their own scripts and styles: user-supplied text is only
// ever inserted as text, and this is the second line of defence.
const webCSP = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
	"connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

// loadWebAssets reads every embedded file into memory with its type and ETag.
func loadWebAssets() map[string]*webAsset {
	out := map[string]*webAsset{}
	_ = fs.WalkDir(webFiles, "web", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := webFiles.ReadFile(p)
		if err != nil {
			return err
		}
		ct, known := webContentTypes[path.Ext(p)]
		if !known {
			ct = "application/octet-stream"
		}
		sum := sha256.Sum256(b)
		// The ETag is weak: the plain and the gzip body share it.
		etag := `W/"` + hex.EncodeToString(sum[:8]) + `"`
		out[strings.TrimPrefix(p, "web/")] = &webAsset{body: b, gz: gzipped(b), ctype: ct, etag: etag}
		return nil
	})
	return out
}

// swBuildMark is the placeholder in sw.js that becomes the build's id.
const swBuildMark = "__PODIUM_BUILD__"

// stampServiceWorker writes the build's id (a hash of every other embedded file) into
// the service worker, so that any change to the app gives a new worker with a new cache
// and the phones drop the old app shell (docs/behaviour.md#judge-app).
func stampServiceWorker(assets map[string]*webAsset) {
	sw := assets["static/sw.js"]
	names := make([]string, 0, len(assets))
	for n := range assets {
		if n != "static/sw.js" {
			names = append(names, n)
		}
	}
	slices.Sort(names)
	h := sha256.New()
	for _, n := range names {
		h.Write([]byte(n + " " + assets[n].etag + "\n"))
	}
	body := bytes.ReplaceAll(sw.body, []byte(swBuildMark), []byte(hex.EncodeToString(h.Sum(nil)[:8])))
	sum := sha256.Sum256(body)
	assets["static/sw.js"] = &webAsset{body: body, gz: gzipped(body), ctype: sw.ctype, etag: `W/"` + hex.EncodeToString(sum[:8]) + `"`}
}

// webAssets prepares the embedded files once per process (reading, hashing, gzip at
// best compression: about 25 ms of CPU).
var webAssets = sync.OnceValue(func() map[string]*webAsset {
	assets := loadWebAssets()
	stampServiceWorker(assets)
	return assets
})

// PrepareWebAssets starts preparing the embedded web files in the background, so that a
// binary which calls it before recovering its state has them ready when the routes are
// built instead of compressing them after recovery (docs/behaviour.md#recovery-at-memory-speed).
func PrepareWebAssets() { go webAssets() }

// routesWeb registers the embedded web app: the judge app at / and /join with its
// service worker and manifest, the admin dashboard at /admin, the expo display at /expo,
// the team page at /team/<token> and their files under /static/.
func (s *Server) routesWeb(r fiber.Router) {
	assets := webAssets()
	page := func(name string) fiber.Handler {
		a := assets[name]
		return func(c *fiber.Ctx) error { return sendAsset(c, a, true) }
	}
	file := func(name string) fiber.Handler {
		a := assets[name]
		return func(c *fiber.Ctx) error { return sendAsset(c, a, false) }
	}
	r.Get("/", page("judge.html"))
	r.Get("/join", page("judge.html"))
	r.Get("/admin", page("admin.html"))
	r.Get("/expo", page("expo.html"))
	// A team's page (docs/behaviour.md#after-judging): the token is read by the page's
	// script from its address, never by this handler, so nothing here can log or echo it.
	r.Get("/team/:token", page("team.html"))
	// At the root so that its scope covers the judge app; no-cache like every file, so
	// the browser revalidates it on each visit and a new build replaces the old.
	r.Get("/sw.js", file("static/sw.js"))
	r.Get("/manifest.webmanifest", file("manifest.webmanifest"))
	r.Get("/static/*", func(c *fiber.Ctx) error {
		name := c.Params("*")
		a, found := assets["static/"+name]
		if !found || strings.Contains(name, "..") {
			return notFound("no such file")
		}
		return sendAsset(c, a, false)
	})
}

// sendAsset answers with an embedded file, honouring If-None-Match. Browsers revalidate
// every time (no-cache), so a new binary's files are picked up at once.
func sendAsset(c *fiber.Ctx, a *webAsset, html bool) error {
	c.Set(fiber.HeaderCacheControl, "no-cache")
	c.Set(fiber.HeaderETag, a.etag)
	c.Set(fiber.HeaderXContentTypeOptions, "nosniff")
	if html {
		c.Set(fiber.HeaderContentSecurityPolicy, webCSP)
		c.Set(fiber.HeaderReferrerPolicy, "same-origin")
		c.Set(fiber.HeaderXFrameOptions, "DENY")
	}
	if inm := c.Get(fiber.HeaderIfNoneMatch); inm != "" && strings.Contains(inm, a.etag) {
		return c.SendStatus(fiber.StatusNotModified)
	}
	c.Set(fiber.HeaderContentType, a.ctype)
	c.Set(fiber.HeaderVary, fiber.HeaderAcceptEncoding)
	if a.gz != nil && acceptsGzip(c.Get(fiber.HeaderAcceptEncoding)) { // content_cache.go
		c.Set(fiber.HeaderContentEncoding, "gzip")
		return c.Send(a.gz)
	}
	return c.Send(a.body)
}

// gzipped compresses b once at startup; it returns nil when that saves little.
func gzipped(b []byte) []byte {
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	_, _ = zw.Write(b)
	_ = zw.Close()
	if buf.Len() > len(b)*9/10 {
		return nil
	}
	return buf.Bytes()
}
