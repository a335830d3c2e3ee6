package transport

import (
	"bytes"
	"errors"
	"testing"
)

// FuzzParseUpload: the streamed multipart parser never panics, refuses bad forms with a
// 400, and never keeps a field longer than maxUploadField.
func FuzzParseUpload(f *testing.F) {
	f.Add([]byte("--b\r\nContent-Disposition: form-data; name=\"csv\"; filename=\"a.csv\"\r\n\r\nname,email\r\n--b\r\nContent-Disposition: form-data; name=\"hasHeader\"\r\n\r\ntrue\r\n--b--\r\n"))
	f.Add([]byte("--b\r\nContent-Disposition: form-data; name=\"csv\"\r\n\r\nx\r\n--b\r\nContent-Disposition: form-data; name=\"csv\"\r\n\r\ny\r\n--b--\r\n"))
	f.Add([]byte("--b\r\n\r\n--b--"))
	f.Add([]byte("garbage"))
	f.Fuzz(func(t *testing.T, body []byte) {
		u, err := parseUpload(bytes.NewReader(body), "b", len(body))
		if err != nil {
			var he *httpError
			if !errors.As(err, &he) || he.status != 400 {
				t.Fatalf("refusal is not a 400: %v", err)
			}
			return
		}
		for k, v := range u.fields {
			if len(v) > maxUploadField || k == "csv" {
				t.Fatalf("field %q kept (%d bytes)", k, len(v))
			}
		}
		if len(u.csv) > len(body) {
			t.Fatal("csv longer than the body")
		}
	})
}
