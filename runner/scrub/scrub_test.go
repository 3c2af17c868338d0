package scrub

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"html/template"
	"net/url"
	"strings"
	"testing"

	"gotest.tools/v3/assert"

	"github.com/agentrunner/runner/runner/report/markdown"
)

// A secret with characters every encoding treats differently.
const awkward = `sk-"a<b>&c+d/e f'g\h`

func TestEveryEncodingOfASecretIsReplaced(t *testing.T) {
	var s Set
	s.Add(awkward)
	jsonStd, _ := json.Marshal(awkward)
	var noHTML bytes.Buffer
	enc := json.NewEncoder(&noHTML)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(awkward)
	var x bytes.Buffer
	_ = xml.EscapeText(&x, []byte(awkward))
	var page bytes.Buffer
	_ = template.Must(template.New("").Parse(`<p>{{.}}</p>`)).Execute(&page, awkward)
	for name, text := range map[string]string{
		"raw":           "key: " + awkward + ".",
		"JSON":          string(jsonStd),
		"JSON, no HTML": noHTML.String(),
		"%q":            fmt.Sprintf("%q", awkward),
		"XML":           x.String(),
		"html/template": page.String(),
		"query":         "https://h/?key=" + url.QueryEscape(awkward),
		"path":          "https://h/" + url.PathEscape(awkward),
		"user info":     (&url.URL{Scheme: "http", Host: "h", User: url.UserPassword("me", awkward)}).String(),
		"Markdown":      "| " + markdown.Escape(awkward) + " |",
	} {
		got := s.String(text)
		assert.Assert(t, strings.Contains(got, Redacted), "%s: %s -> %s", name, text, got)
		assert.Assert(t, !strings.Contains(got, "sk-") && !strings.Contains(got, "sk\\-"), "%s: %s -> %s", name, text, got)
		assert.Equal(t, string(s.Bytes([]byte(text))), got, name)
	}
}

func TestLongestValueWinsAndShortValuesAreIgnored(t *testing.T) {
	var s Set
	s.Add("token-123456", "token-123456-and-more", "true", "")
	assert.Equal(t, s.Len(), 2)
	assert.Equal(t, s.String("a token-123456-and-more b token-123456 true"), "a [REDACTED] b [REDACTED] true")
	var empty Set
	assert.Equal(t, empty.String("anything"), "anything")
	b := []byte("untouched")
	assert.Assert(t, &s.Bytes(b)[0] == &b[0], "no secret: the same slice, no copy")
}

func TestWriterCatchesASecretSplitAcrossWrites(t *testing.T) {
	var s Set
	const key = "sk-live-abcdefghijklmnop"
	s.Add(key)
	var out bytes.Buffer
	w := s.NewWriter(&out)
	for _, part := range []string{"Incorrect API key provided: sk-li", "ve-abcdefg", "hijklmnop. See docs.\n", "ends with s"} {
		_, err := w.Write([]byte(part))
		assert.NilError(t, err)
		assert.Assert(t, !strings.Contains(out.String(), "sk-li"), "a prefix of the key was written: %q", out.String())
	}
	assert.Equal(t, out.String(), "Incorrect API key provided: [REDACTED]. See docs.\nends with ", "the last s may begin the key")
	assert.NilError(t, w.Flush())
	assert.Equal(t, out.String(), "Incorrect API key provided: [REDACTED]. See docs.\nends with s")
	assert.Assert(t, s.NewWriter(w) == w, "not wrapped twice")
}

func TestWriterPassesThroughWhenNothingIsSecret(t *testing.T) {
	var s Set
	var out bytes.Buffer
	w := s.NewWriter(&out)
	_, _ = w.Write([]byte("s"))
	assert.Equal(t, out.String(), "s")
}

func TestValueScrubsEveryStringOfARecord(t *testing.T) {
	var s Set
	const key = "gm-secret-0123456789"
	s.Add(key)
	type inner struct {
		Text string
		Raw  json.RawMessage
	}
	rec := struct {
		Reason string
		List   []string
		Ptr    *inner
		Map    map[string]string
		Any    any
		Anys   []any
		n      string
	}{
		Reason: "HTTP 401: key " + key,
		List:   []string{"ok", key},
		Ptr:    &inner{Text: key, Raw: json.RawMessage(`{"k":"` + key + `"}`)},
		Map:    map[string]string{key: "v", "k": key},
		Any:    "x" + key,
		Anys:   []any{map[string]any{"k": key}, inner{Text: key}},
		n:      key,
	}
	s.Value(&rec)
	b, err := json.Marshal(rec)
	assert.NilError(t, err)
	assert.Assert(t, !strings.Contains(string(b), key), "%s", b)
	assert.Equal(t, rec.Reason, "HTTP 401: key [REDACTED]")
	assert.Equal(t, rec.n, key, "unexported fields are no output")
}

func TestURLSecrets(t *testing.T) {
	for in, want := range map[string][]string{
		"http://TOKEN123@host/v1":      {"TOKEN123", "TOKEN123"},
		"TOKEN123@127.0.0.1:11434":     {"TOKEN123", "TOKEN123"},
		"https://user:p%40ssword@h/v1": {"p@ssword", "p%40ssword"},
		"http://host:8080/v1":          nil,
		"127.0.0.1:11434":              nil,
	} {
		assert.DeepEqual(t, URLSecrets(in), want)
	}
}

// The transcript's write path scrubs every event; these measure what it adds per event
// (see runner/transcript's BenchmarkWrite for the whole path).
func BenchmarkString(b *testing.B) {
	line := strings.Repeat(`{"type":"tool_call","data":{"output":"main.go:12: undefined: x\n"}} `, 20)
	for _, n := range []int{0, 1, 8} {
		var s Set
		for i := range n {
			s.Add(fmt.Sprintf("sk-proj-%d-abcdefghijklmnopqrstuvwxyz0123456789", i))
		}
		buf := []byte(line)
		b.Run(fmt.Sprintf("secrets=%d", n), func(b *testing.B) {
			b.SetBytes(int64(len(line)))
			for b.Loop() {
				_ = s.Bytes(buf)
			}
		})
	}
}
