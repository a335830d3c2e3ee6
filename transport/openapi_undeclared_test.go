package transport

import (
	"encoding/json"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// The document as plain JSON, for the undeclared-field walk.
var openAPIRaw = sync.OnceValue(func() map[string]any {
	var doc map[string]any
	if err := json.Unmarshal(openAPIDoc, &doc); err != nil {
		panic(err)
	}
	return doc
})

// resolve follows a local $ref ("#/components/...").
func resolveRef(doc map[string]any, node map[string]any) map[string]any {
	for range 16 {
		ref, ok := node["$ref"].(string)
		if !ok {
			return node
		}
		var cur any = doc
		for _, part := range strings.Split(strings.TrimPrefix(ref, "#/"), "/") {
			m, _ := cur.(map[string]any)
			cur = m[part]
		}
		next, ok := cur.(map[string]any)
		if !ok {
			return nil
		}
		node = next
	}
	return node
}

// responseSchema finds the JSON schema of a response in the document.
func responseSchema(method, tmpl string, status int) map[string]any {
	doc := openAPIRaw()
	paths, _ := doc["paths"].(map[string]any)
	item, _ := paths[tmpl].(map[string]any)
	op, _ := item[strings.ToLower(method)].(map[string]any)
	resps, _ := op["responses"].(map[string]any)
	r, ok := resps[strconv.Itoa(status)].(map[string]any)
	if !ok {
		if r, ok = resps["default"].(map[string]any); !ok {
			return nil
		}
	}
	r = resolveRef(doc, r)
	content, _ := r["content"].(map[string]any)
	media, _ := content["application/json"].(map[string]any)
	schema, _ := media["schema"].(map[string]any)
	return schema
}

// undeclared lists the object fields of v (a decoded JSON value) that schema does not
// declare, by their path: a response must describe every field it sends.
func undeclared(schema map[string]any, v any, at string, out *[]string) {
	doc := openAPIRaw()
	schema = resolveRef(doc, schema)
	if schema == nil {
		return
	}
	// Combinators: a field is declared when any branch declares it.
	for _, k := range []string{"allOf", "anyOf", "oneOf"} {
		if list, ok := schema[k].([]any); ok {
			props := map[string]any{}
			for _, b := range list {
				if bm, ok := b.(map[string]any); ok {
					bm = resolveRef(doc, bm)
					if p, ok := bm["properties"].(map[string]any); ok {
						for name, s := range p {
							props[name] = s
						}
					}
					if _, open := bm["additionalProperties"]; open {
						return
					}
				}
			}
			if len(props) > 0 {
				undeclared(map[string]any{"type": "object", "properties": props}, v, at, out)
			}
			return
		}
	}
	switch x := v.(type) {
	case map[string]any:
		props, _ := schema["properties"].(map[string]any)
		extra, open := schema["additionalProperties"].(map[string]any)
		if _, anyExtra := schema["additionalProperties"]; anyExtra && !open {
			return // additionalProperties: true
		}
		if props == nil && !open {
			return // a free-form object
		}
		for k, fv := range x {
			if s, ok := props[k].(map[string]any); ok {
				undeclared(s, fv, at+"."+k, out)
			} else if open {
				undeclared(extra, fv, at+"."+k, out)
			} else {
				*out = append(*out, at+"."+k)
			}
		}
	case []any:
		items, _ := schema["items"].(map[string]any)
		for i, e := range x {
			if i > 3 {
				break
			}
			undeclared(items, e, at+"[]", out)
		}
	}
}

// checkDeclared fails the test for each field of a JSON response body that the
// document does not describe.
func checkDeclared(t testing.TB, method, path, tmpl string, status int, body []byte) {
	t.Helper()
	schema := responseSchema(method, tmpl, status)
	if schema == nil {
		return
	}
	var v any
	if json.Unmarshal(body, &v) != nil {
		return
	}
	var out []string
	undeclared(schema, v, "", &out)
	sort.Strings(out)
	out = slicesCompactStrings(out)
	for _, f := range out {
		t.Errorf("%s %s (%d): field %s is not declared in openapi.json", method, path, status, strings.TrimPrefix(f, "."))
	}
}

func slicesCompactStrings(s []string) []string {
	out := s[:0]
	for i, v := range s {
		if i == 0 || v != s[i-1] {
			out = append(out, v)
		}
	}
	return out
}
