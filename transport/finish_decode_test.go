package transport

import (
	"encoding/json"
	"testing"
)

var finishBodies = []string{
	`{"notes":"ok"}`, `{"notes":"great demo","starred":true}`, `{"starred":false,"notes":""}`,
	` { "notes" : "a" , "starred" : true } `, "{\n\t\"notes\":\"x\"\r\n}", `{}`, ` {} `,
	`{"notes":"a","notes":"b"}`, `{"starred":true,"starred":false}`,
	// encoding/json's: escapes, other cases, other keys, other types, broken JSON.
	`{"notes":"a\"b"}`, `{"notes":"\u00e9"}`, `{"notes":"é"}`, `{"Notes":"x"}`, `{"NOTES":"x"}`,
	`{"notes":"x","extra":1}`, `{"notes":null}`, `{"starred":null}`, `{"notes":1}`,
	`{"starred":"yes"}`, `null`, ``, `[]`, `{"notes":"x"} {}`, `{"notes":"x",}`, `{"notes" "x"}`,
	`{"notes":"x"`, `{"notes":"tab	in"}`, `{"starred":tru}`, `{"starred":truex}`, `{,}`,
}

// TestFinishDecodePlain: the plain finish bodies decode without encoding/json, to what
// it gives; everything else is left to it.
func TestFinishDecodePlain(t *testing.T) {
	plain := 0
	for _, body := range finishBodies {
		if checkFinishDecode(t, []byte(body)) {
			plain++
		}
	}
	if plain != 9 {
		t.Fatalf("%d bodies decoded plainly, want the first 9", plain)
	}
}

// FuzzFinishDecodePlain: whatever decodePlain accepts, encoding/json accepts and decodes
// to the same request.
//
//	go test ./transport -run '^$' -fuzz FuzzFinishDecodePlain -fuzztime 60s
func FuzzFinishDecodePlain(f *testing.F) {
	for _, body := range finishBodies {
		f.Add([]byte(body))
	}
	f.Fuzz(func(t *testing.T, body []byte) { checkFinishDecode(t, body) })
}

func checkFinishDecode(t *testing.T, body []byte) bool {
	t.Helper()
	var fast finishReq
	if !fast.decodePlain(body) {
		if fast != (finishReq{}) {
			t.Fatalf("%q: refused but left %+v", body, fast)
		}
		return false
	}
	var slow finishReq
	if err := json.Unmarshal(body, &slow); err != nil {
		t.Fatalf("%q: decoded plainly to %+v, but encoding/json refuses it: %v", body, fast, err)
	}
	if fast != slow {
		t.Fatalf("%q: plain %+v, encoding/json %+v", body, fast, slow)
	}
	return true
}
