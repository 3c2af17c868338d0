// Package scrub keeps secret values out of everything runner writes. It holds the
// process's set of known credentials (provider keys, the user info of server URLs, values
// a task marks secret, variables whose names look like credentials) and replaces each, in
// every encoding an output may give it (raw, JSON, Go-quoted, HTML and XML, percent and
// Markdown escaped), with [REDACTED]. Every output goes through it: the console streams
// and files through Writer or WriteFile, JSON documents through JSON (each string as a
// decoder reads it, so an escaped form inside a string is caught too), records through
// Value, single strings through String. With no secret known every call is one atomic
// load.
package scrub

import (
	"bytes"
	"encoding/json"
	"html"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"text/template"

	"github.com/agentrunner/runner/runner/report/markdown"
)

// Redacted replaces every secret value.
const Redacted = "[REDACTED]"

// MinLen is the shortest value scrubbed: shorter ones ("1", "true", "test") would blank
// out ordinary words everywhere and are no credential anyway. A short password in a URL
// is still hidden where the URL is printed (model.RedactText).
const MinLen = 6

// Set is a set of secret values. The zero value is empty and ready; a Set is safe for
// concurrent use, and adding is the only change it knows (a value once secret stays so).
type Set struct {
	mu     sync.Mutex
	values map[string]bool
	m      atomic.Pointer[matcher]
}

// matcher is an immutable snapshot of a Set: every encoding of every value, longest first.
type matcher struct {
	needles [][]byte
	strs    []string
	r       *strings.Replacer
	maxLen  int
	// chars marks every byte that occurs in a needle: a JSON string needs decoding (see
	// Set.JSON) only when an escape in it stands for one of them.
	chars [256]bool
}

// Add registers values (and their encodings) as secret. Empty values and values shorter
// than MinLen are ignored.
func (s *Set) Add(values ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	changed := false
	for _, v := range values {
		if len(v) < MinLen || s.values[v] {
			continue
		}
		if s.values == nil {
			s.values = map[string]bool{}
		}
		s.values[v] = true
		changed = true
	}
	if !changed {
		return
	}
	seen := map[string]bool{}
	var strs []string
	for v := range s.values {
		for _, e := range encodings(v) {
			if len(e) >= MinLen && !seen[e] {
				seen[e] = true
				strs = append(strs, e)
			}
		}
	}
	// Longest first: the Replacer tries its arguments in order at each position, so a
	// value that contains another is replaced whole.
	slices.SortFunc(strs, func(a, b string) int {
		if len(a) != len(b) {
			return len(b) - len(a)
		}
		return strings.Compare(a, b)
	})
	m := &matcher{strs: strs, maxLen: len(strs[0])}
	args := make([]string, 0, 2*len(strs))
	for _, e := range strs {
		m.needles = append(m.needles, []byte(e))
		args = append(args, e, Redacted)
		for i := 0; i < len(e); i++ {
			m.chars[e[i]] = true
		}
	}
	m.r = strings.NewReplacer(args...)
	s.m.Store(m)
}

// Len reports how many values are registered.
func (s *Set) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.values)
}

// String returns s with every secret replaced.
func (s *Set) String(str string) string {
	m := s.m.Load()
	if m == nil || !m.containsString(str) {
		return str
	}
	return m.r.Replace(str)
}

// Bytes returns b with every secret replaced: b itself when it holds none, else a new
// slice.
func (s *Set) Bytes(b []byte) []byte {
	m := s.m.Load()
	if m == nil || !m.contains(b) {
		return b
	}
	return []byte(m.r.Replace(string(b)))
}

func (m *matcher) contains(b []byte) bool {
	for _, n := range m.needles {
		if bytes.Contains(b, n) {
			return true
		}
	}
	return false
}

func (m *matcher) containsString(s string) bool {
	for _, n := range m.strs {
		if strings.Contains(s, n) {
			return true
		}
	}
	return false
}

// heldBack returns the index in b from which b's tail is the beginning of a secret (so
// the next write may complete it), or len(b).
func (m *matcher) heldBack(b []byte) int {
	cut := len(b)
	for _, n := range m.needles {
		start := max(len(b)-len(n)+1, 0)
		for i := start; i < cut; i++ {
			if b[i] == n[0] && bytes.HasPrefix(n, b[i:]) {
				cut = i
				break
			}
		}
	}
	return cut
}

// encodings are the forms a value takes in runner's outputs.
func encodings(v string) []string {
	out := []string{v}
	add := func(e string) {
		if e != "" && !slices.Contains(out, e) {
			out = append(out, e)
		}
	}
	if b, err := json.Marshal(v); err == nil { // JSON, with <, > and & as \u003c ...
		add(string(b[1 : len(b)-1]))
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if enc.Encode(v) == nil {
		b := bytes.TrimSpace(buf.Bytes())
		add(string(b[1 : len(b)-1]))
	}
	q := strconv.Quote(v) // %q in messages
	add(q[1 : len(q)-1])
	add(html.EscapeString(v))
	add(template.HTMLEscapeString(v))                                   // also encoding/xml's form, but for \t \n \r
	add(strings.ReplaceAll(template.HTMLEscapeString(v), "+", "&#43;")) // html/template
	add(xmlEscape(v))
	add(url.QueryEscape(v))
	add(url.PathEscape(v))
	add(url.UserPassword("u", v).String()[2:]) // a password in a URL's user info
	add(url.User(v).String())                  // a user name
	add(markdown.Escape(v))
	add(strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A", ":", "%3A", ",", "%2C").Replace(v)) // GitHub workflow commands
	return out
}

func xmlEscape(v string) string {
	return strings.NewReplacer(`&`, "&amp;", `<`, "&lt;", `>`, "&gt;", `"`, "&#34;", `'`, "&#39;",
		"\t", "&#x9;", "\n", "&#xA;", "\r", "&#xD;").Replace(v)
}
