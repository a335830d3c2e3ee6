package transport

import (
	"crypto/subtle"
	"net/url"
	"strings"

	"github.com/gofiber/fiber/v2"
	qrcode "github.com/skip2/go-qrcode"

	"podium/engine"
)

// QR self-signup (docs/behaviour.md#admin-operations). The admin generates a secret (general or per track); the
// join link carrying it is shown as a QR code; whoever scans it can create a judge.

func (s *Server) routesQR(r fiber.Router) {
	// The .png routes come before /admin/qr/:track, which would otherwise take them.
	r.Get("/admin/qr.png", s.adminAuth, s.qrPNG)
	r.Get("/admin/qr/:track.png", s.adminAuth, s.qrPNG)
	r.Get("/admin/qr", s.adminAuth, s.getQR)
	r.Get("/admin/qr/:track", s.adminAuth, s.getQR)
	r.Post("/admin/qr", s.adminAuth, s.newQR)
	r.Post("/admin/qr/:track", s.adminAuth, s.newQR)
	r.Post("/qr/check", s.qrCheck)
	r.Post("/qr/check/:track", s.qrCheck)
	r.Post("/qr/add", s.qrAdd)
}

// qrSecretBytes is the entropy of a QR secret: 18 random bytes, 24 URL-safe characters.
const qrSecretBytes = 18

// trackParam returns the decoded :track parameter ("" on the general routes).
func trackParam(c *fiber.Ctx) (string, error) {
	raw := c.Params("track")
	if raw == "" {
		return "", nil
	}
	t, err := url.PathUnescape(raw)
	if err != nil || t == "" {
		return "", badRequest("invalid track name in the path")
	}
	return t, nil
}

// qrLookup returns the secret for track ("" = general) and whether the track exists.
func (s *Server) qrLookup(track string) (secret string, exists bool) {
	s.node.Read(func(st *engine.State) {
		exists = track == ""
		for _, t := range st.Options.Tracks {
			exists = exists || t == track
		}
		secret = st.QRSecret(track)
	})
	return secret, exists
}

// newQR handles POST /api/admin/qr and /api/admin/qr/:track.
func (s *Server) newQR(c *fiber.Ctx) error {
	track, err := trackParam(c)
	if err != nil {
		return err
	}
	secret := newToken(qrSecretBytes)
	if _, err := s.submit(c, &engine.SetQRCode{Track: track, Secret: secret}); err != nil {
		return err
	}
	return c.JSON(fiber.Map{"qr_code": secret})
}

// getQR handles GET /api/admin/qr and /api/admin/qr/:track.
func (s *Server) getQR(c *fiber.Ctx) error {
	track, err := trackParam(c)
	if err != nil {
		return err
	}
	secret, exists := s.qrLookup(track)
	if !exists {
		return notFound("track %q does not exist", track)
	}
	return c.JSON(fiber.Map{"qr_code": secret})
}

// joinLink is the URL a QR code carries: <PUBLIC_URL>/join?code=<secret>[&track=<track>].
// Without PUBLIC_URL the request's own scheme and host are used.
func (s *Server) joinLink(c *fiber.Ctx, secret, track string) string {
	base := strings.TrimRight(s.cfg.PublicURL, "/")
	if base == "" {
		base = c.BaseURL()
	}
	link := base + "/join?code=" + url.QueryEscape(secret)
	if track != "" {
		link += "&track=" + url.QueryEscape(track)
	}
	return link
}

// qrPNG handles GET /api/admin/qr.png and /api/admin/qr/:track.png: the join link as a
// QR code image.
func (s *Server) qrPNG(c *fiber.Ctx) error {
	track, err := trackParam(c)
	if err != nil {
		return err
	}
	secret, exists := s.qrLookup(track)
	if !exists {
		return notFound("track %q does not exist", track)
	}
	if secret == "" {
		return notFound("no QR code has been generated yet")
	}
	png, err := qrcode.Encode(s.joinLink(c, secret, track), qrcode.Medium, 512)
	if err != nil {
		return err
	}
	c.Set(fiber.HeaderContentType, "image/png")
	c.Set(fiber.HeaderCacheControl, "no-store")
	return c.Send(png)
}

// secretMatches compares a presented code with a secret in constant time; an empty
// secret never matches.
func secretMatches(secret, code string) bool {
	return secret != "" && subtle.ConstantTimeCompare([]byte(secret), []byte(code)) == 1
}

type qrCheckReq struct {
	Code *string `json:"code"`
}

func (r *qrCheckReq) validate() error { return need("code", r.Code != nil) }

// qrCheck handles POST /api/qr/check and /api/qr/check/:track.
func (s *Server) qrCheck(c *fiber.Ctx) error {
	if err := s.throttle(c, s.qrLimit, "qr"); err != nil {
		return err
	}
	track, err := trackParam(c)
	if err != nil {
		return err
	}
	var req qrCheckReq
	if err := bindJSON(c, &req, false); err != nil {
		return err
	}
	if err := req.validate(); err != nil {
		return err
	}
	secret, _ := s.qrLookup(track)
	return okFlag(c, secretMatches(secret, *req.Code))
}

type qrAddReq struct {
	Name  *string `json:"name"`
	Email *string `json:"email"`
	Notes string  `json:"notes"`
	Code  *string `json:"code"`
	Track string  `json:"track"`
}

func (r *qrAddReq) validate() error {
	if err := need("name", r.Name != nil); err != nil {
		return err
	}
	if err := need("email", r.Email != nil); err != nil {
		return err
	}
	return need("code", r.Code != nil)
}

// qrAdd handles POST /api/qr/add: a judge signs up with a QR secret and gets its login
// code back (and by email).
func (s *Server) qrAdd(c *fiber.Ctx) error {
	if err := s.throttle(c, s.qrLimit, "qr"); err != nil {
		return err
	}
	var req qrAddReq
	if err := bindJSON(c, &req, false); err != nil {
		return err
	}
	if err := req.validate(); err != nil {
		return err
	}
	track := strings.TrimSpace(req.Track)
	var general, trackSecret string
	s.node.Read(func(st *engine.State) {
		general = st.QRSecret("")
		if track != "" {
			trackSecret = st.QRSecret(track)
		}
	})
	// Both comparisons always run, so timing does not tell which secret matched.
	trackOK := secretMatches(trackSecret, *req.Code)
	generalOK := secretMatches(general, *req.Code)
	switch {
	case track != "" && trackOK:
	case generalOK:
		track = ""
	default:
		return &httpError{status: fiber.StatusUnauthorized, msg: "invalid QR code"}
	}
	nj := engine.NewJudge{Name: strings.TrimSpace(*req.Name), Email: strings.TrimSpace(*req.Email), Notes: req.Notes, Track: track}
	res, err := s.node.Submit(c.UserContext(), engine.Public, &engine.CreateJudges{
		Judges: []engine.NewJudge{nj}, Codes: newLoginCodes(1), DuplicateIsConflict: true, Mail: true,
	})
	if err != nil {
		return err
	}
	created := res.([]engine.CreatedJudge)
	s.mailQueued()
	return c.JSON(fiber.Map{"ok": 1, "code": created[0].Code})
}
