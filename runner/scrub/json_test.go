package scrub

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"gotest.tools/v3/assert"
)

// TestJSONScrubsStringsAsTheyDecode: a secret Go-quoted inside a JSON string (the
// transcript's assertion messages), a JSON document inside a JSON string, and a key are
// replaced; text without a secret, and input that is not JSON, keep their bytes.
func TestJSONScrubsStringsAsTheyDecode(t *testing.T) {
	var s Set
	s.Add(awkward)
	for name, v := range map[string]any{
		"Go-quoted in a message": map[string]any{"message": "it holds " + strconv.Quote("x"+awkward+"y")},
		"JSON in a string":       map[string]any{"args": fmt.Sprintf(`{"token": %q}`, awkward)},
		"a key":                  map[string]any{strconv.Quote(awkward): 1},
		"nested":                 []any{map[string]any{"a": []any{"ok", strconv.Quote(awkward)}}},
	} {
		t.Run(name, func(t *testing.T) {
			b, err := json.Marshal(v)
			assert.NilError(t, err)
			assert.Assert(t, !strings.Contains(string(s.Bytes(b)), Redacted), "the byte scrub alone misses it: %s", s.Bytes(b))
			got := s.JSON(b)
			assert.Assert(t, strings.Contains(string(got), Redacted), "%s", got)
			var back any
			assert.NilError(t, json.Unmarshal(got, &back), "still JSON: %s", got)
			dump := fmt.Sprint(back)
			assert.Assert(t, !strings.Contains(dump, awkward) && !strings.Contains(dump, strconv.Quote(awkward)[1:8]), "%s", dump)
		})
	}
	plain := []byte(`{"a":"line\nline","b":"\u003cok\u003e"}`)
	assert.Equal(t, &s.JSON(plain)[0], &plain[0], "nothing secret: the same bytes")
	notJSON := []byte(`"unterminated ` + awkward)
	assert.Equal(t, string(s.JSON(notJSON)), `"unterminated `+Redacted)
}

// BenchmarkJSON is the transcript's scrub of one tool-call event with a 2 KB output (its
// newlines escaped) and four secrets: the byte scrub it replaces, then JSON, in one run.
func BenchmarkJSON(b *testing.B) {
	var s Set
	for i := range 4 {
		s.Add(fmt.Sprintf("sk-bench-%d-0123456789abcdefghijklmnopqrstuvwxyz", i))
	}
	event, err := json.Marshal(map[string]any{"tool": "run_in_terminal", "args": map[string]string{"command": "go test ./..."},
		"output": strings.Repeat("--- FAIL: TestParse (0.00s)\n    parse_test.go:42: got \"3\", want \"4\"\n", 32)})
	assert.NilError(b, err)
	b.Run("bytes", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_ = s.Bytes(event)
		}
	})
	b.Run("json", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_ = s.JSON(event)
		}
	})
	// A secret holding a quote: every string with an escaped quote is decoded.
	var q Set
	q.Add(awkward)
	b.Run("json-quote-secret", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_ = q.JSON(event)
		}
	})
}

// TestJSONPropertyRandomSecrets: random secrets over the whole byte range, embedded raw,
// Go-quoted and JSON-encoded in the strings (and keys) of a JSON document; after JSON no
// string of the document, nor a quoted string inside one, decodes to the secret.
func TestJSONPropertyRandomSecrets(t *testing.T) {
	rng := rand.New(rand.NewPCG(24, 3))
	quotedRE := regexp.MustCompile(`"(?:[^"\\]|\\.)*"`)
	for range 500 {
		b := make([]byte, MinLen+rng.IntN(20))
		for i := range b {
			b[i] = byte(rng.IntN(256))
		}
		secret := string(b)
		var s Set
		s.Add(secret)
		js, _ := json.Marshal(secret)
		doc, err := json.Marshal(map[string]any{
			"raw": "a" + secret + "b", "go": "msg: " + strconv.Quote(secret), "json": "{\"k\": " + string(js) + "}",
			strconv.Quote(secret): []any{strconv.Quote("x" + secret)},
		})
		assert.NilError(t, err)
		var v any
		assert.NilError(t, json.Unmarshal(s.JSON(doc), &v), "%q", secret)
		var strs []string
		var walk func(any)
		walk = func(v any) {
			switch x := v.(type) {
			case string:
				strs = append(strs, x)
			case []any:
				for _, e := range x {
					walk(e)
				}
			case map[string]any:
				for k, e := range x {
					strs = append(strs, k)
					walk(e)
				}
			}
		}
		walk(v)
		for _, str := range strs {
			assert.Assert(t, !strings.Contains(str, secret), "%q in %q", secret, str)
			for _, q := range quotedRE.FindAllString(str, -1) {
				if u, err := strconv.Unquote(q); err == nil {
					assert.Assert(t, !strings.Contains(u, secret), "%q in %q", secret, u)
				}
				var u string
				if json.Unmarshal([]byte(q), &u) == nil {
					assert.Assert(t, !strings.Contains(u, secret), "%q in %q", secret, u)
				}
			}
		}
	}
}
