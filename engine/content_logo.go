package engine

import (
	"bytes"
	"encoding/base64"
	"encoding/xml"
	"io"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Logo validation for sponsors (docs/behaviour.md#public-content-api): type, size, and SVGs without scripts.

// ---- Logos ----

// CheckLogo validates a logo (docs/behaviour.md#public-content-api) and returns it normalised: the content type in
// lower case, the data as standard base64 without line breaks. Both empty means "no
// logo". The data must be raw base64 (no "data:" prefix), at most MaxLogoBytes decoded,
// of an accepted type, and its bytes must match that type.
func CheckLogo(data, ctype string) (string, string, *Error) {
	ctype = strings.ToLower(strings.TrimSpace(ctype))
	if data == "" && ctype == "" {
		return "", "", nil
	}
	if data == "" {
		return "", "", invalidf("logo_content_type is set but logo_data is empty")
	}
	if ctype == "" {
		return "", "", invalidf("logo_content_type is required with logo_data")
	}
	if !containsString(LogoContentTypes, ctype) {
		return "", "", invalidf("logo_content_type %q is not allowed (want one of %s)", ctype, strings.Join(LogoContentTypes, ", "))
	}
	if strings.HasPrefix(data, "data:") {
		return "", "", invalidf("logo_data must be raw base64 without a data: prefix")
	}
	// Cheap size check before decoding anything (generous: line breaks are allowed).
	if len(data) > 2*base64.StdEncoding.EncodedLen(MaxLogoBytes) {
		return "", "", invalidf("logo is larger than %d bytes", MaxLogoBytes)
	}
	raw, err := base64.StdEncoding.DecodeString(data)
	if err != nil {
		return "", "", invalidf("logo_data is not valid base64")
	}
	if len(raw) == 0 {
		return "", "", invalidf("logo_data is empty after decoding")
	}
	if len(raw) > MaxLogoBytes {
		return "", "", invalidf("logo is larger than %d bytes", MaxLogoBytes)
	}
	if !logoMatches(ctype, raw) {
		return "", "", invalidf("logo_data does not contain a %s image", ctype)
	}
	if ctype == "image/svg+xml" {
		if why := svgUnsafe(raw); why != "" {
			return "", "", invalidf("SVG logo refused: %s", why)
		}
	}
	if strings.ContainsAny(data, "\r\n") {
		data = base64.StdEncoding.EncodeToString(raw)
	}
	return data, ctype, nil
}

// logoMatches checks the file signature of raw against the declared type.
func logoMatches(ctype string, raw []byte) bool {
	switch ctype {
	case "image/png":
		return bytes.HasPrefix(raw, []byte("\x89PNG\r\n\x1a\n"))
	case "image/jpeg":
		return bytes.HasPrefix(raw, []byte{0xFF, 0xD8, 0xFF})
	case "image/gif":
		return bytes.HasPrefix(raw, []byte("GIF87a")) || bytes.HasPrefix(raw, []byte("GIF89a"))
	case "image/webp":
		return len(raw) >= 12 && string(raw[0:4]) == "RIFF" && string(raw[8:12]) == "WEBP"
	case "image/svg+xml":
		return isSVG(raw)
	}
	return false
}

// isSVG reports whether raw is UTF-8 text that starts (after a BOM and white space) with
// "<svg" or "<?xml" and whose first XML element is <svg>.
func isSVG(raw []byte) bool {
	if !utf8.Valid(raw) || bytes.IndexByte(raw, 0) >= 0 {
		return false
	}
	text := bytes.TrimPrefix(raw, []byte("\xEF\xBB\xBF"))
	text = bytes.TrimLeft(text, " \t\r\n")
	if !bytes.HasPrefix(text, []byte("<svg")) && !bytes.HasPrefix(text, []byte("<?xml")) {
		return false
	}
	d := xml.NewDecoder(bytes.NewReader(text))
	d.Strict = false
	for i := 0; i < 1000; i++ {
		tok, err := d.RawToken()
		if err != nil {
			return false
		}
		if se, ok := tok.(xml.StartElement); ok {
			return se.Name.Local == "svg"
		}
	}
	return false
}

// svgUnsafe says why an SVG could run code or pull in other documents when a browser
// shows it ("" when it cannot, as far as this check goes; docs/behaviour.md#conventions): a <script> or
// <foreignObject> element, an on* event-handler attribute, a javascript: (or vbscript:)
// link or value, an entity declaration, or XML that does not parse (what a browser does
// with broken markup is not what this check sees).
func svgUnsafe(raw []byte) string {
	d := xml.NewDecoder(bytes.NewReader(bytes.TrimPrefix(raw, []byte("\xEF\xBB\xBF"))))
	d.Strict = true
	d.Entity = map[string]string{} // only the five predefined entities
	for {
		tok, err := d.Token() // Token, not RawToken: unclosed elements are errors too
		if err == io.EOF {
			return ""
		}
		if err != nil {
			return "it is not well-formed XML"
		}
		switch t := tok.(type) {
		case xml.StartElement:
			switch strings.ToLower(t.Name.Local) {
			case "script":
				return "it contains a <script> element"
			case "foreignobject":
				return "it contains a <foreignObject> element"
			}
			for _, a := range t.Attr {
				if strings.HasPrefix(strings.ToLower(a.Name.Local), "on") {
					return "it has an event-handler attribute (" + a.Name.Local + ")"
				}
				if scriptURL(a.Value) {
					return "it has a javascript: link"
				}
			}
		case xml.Directive:
			if bytes.Contains(bytes.ToUpper(t), []byte("ENTITY")) {
				return "it declares XML entities"
			}
		}
	}
}

// scriptURL reports whether v holds a javascript: or vbscript: URL, however spaced,
// cased or entity-escaped the browser would still run it.
func scriptURL(v string) bool {
	var b strings.Builder
	for _, r := range v {
		if r > ' ' && r != 0x7f { // browsers drop control characters and spaces in schemes
			b.WriteRune(unicode.ToLower(r))
		}
	}
	s := b.String()
	return strings.Contains(s, "javascript:") || strings.Contains(s, "vbscript:")
}
