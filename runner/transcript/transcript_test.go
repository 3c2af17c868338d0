package transcript

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"gotest.tools/v3/assert"

	"github.com/agentrunner/runner/runner/scrub"
)

func TestWriteRead(t *testing.T) {
	path := filepath.Join(t.TempDir(), "transcript.jsonl")
	fixed := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	w, err := Create(path, Options{Now: func() time.Time { return fixed }})
	assert.NilError(t, err)
	assert.NilError(t, w.Write(0, raw{TypeStart, map[string]string{"model": "oracle"}}))
	assert.NilError(t, w.Write(1, raw{TypeToolCall, map[string]any{"tool": "read_file"}}))

	// Before Close: every event is already on disk (what kill -9 would leave).
	events, err := ReadFile(path)
	assert.NilError(t, err)
	assert.Equal(t, len(events), 2)
	assert.Equal(t, events[1].Type, TypeToolCall)
	assert.Equal(t, events[1].Step, 1)
	assert.Assert(t, events[0].Time.Equal(fixed))
	var data map[string]string
	assert.NilError(t, json.Unmarshal(events[0].Data, &data))
	assert.Equal(t, data["model"], "oracle")
	assert.NilError(t, w.Close())
}

func TestReadIgnoresTornLastLine(t *testing.T) {
	in := `{"type":"start","time":"2026-01-02T03:04:05Z"}` + "\n" + `{"type":"tool_ca`
	events, err := Read(strings.NewReader(in))
	assert.NilError(t, err)
	assert.Equal(t, len(events), 1)
}

func TestReadRejectsCorruptMiddleLine(t *testing.T) {
	in := "{\"type\":\"start\"}\nnot json\n{\"type\":\"end\"}\n"
	_, err := Read(strings.NewReader(in))
	assert.ErrorContains(t, err, "line 2")
}

func TestWriteUnmarshalableData(t *testing.T) {
	w, err := Create(filepath.Join(t.TempDir(), "t.jsonl"), Options{NoSync: true})
	assert.NilError(t, err)
	defer func() { _ = w.Close() }() // test cleanup: its error does not change what the test checked
	err = w.Write(0, raw{TypeEnd, map[string]any{"bad": make(chan int)}})
	assert.ErrorContains(t, err, "transcript end event")
}

func TestCreateInMissingDir(t *testing.T) {
	_, err := Create(filepath.Join(t.TempDir(), "missing", "t.jsonl"), Options{})
	assert.ErrorContains(t, err, "create transcript")
	assert.Assert(t, os.IsNotExist(unwrapAll(err)))
}

func unwrapAll(err error) error {
	for {
		u, ok := err.(interface{ Unwrap() error })
		if !ok {
			return err
		}
		err = u.Unwrap()
	}
}

func BenchmarkWriteNoSync(b *testing.B) {
	w, err := Create(filepath.Join(b.TempDir(), "t.jsonl"), Options{NoSync: true})
	assert.NilError(b, err)
	defer func() { _ = w.Close() }()
	payload := map[string]any{"tool": "read_file", "args": map[string]string{"path": "main.go"}}
	b.ReportAllocs()
	for b.Loop() {
		_ = w.Write(1, raw{TypeToolCall, payload})
	}
}

// BenchmarkWriteScrubbed is a tool call with a 2 KB output, written with no secret known
// and then with four (a provider key, a URL token and two task secrets): the scrubber's
// cost on the per-event path. Sub-benchmarks run in order; the secrets stay registered.
func BenchmarkWriteScrubbed(b *testing.B) {
	payload := map[string]any{"tool": "run_in_terminal", "args": map[string]string{"command": "go test ./..."},
		"output": strings.Repeat("--- FAIL: TestParse (0.00s)\n    parse_test.go:42: got 3, want 4\n", 32)}
	for _, n := range []int{0, 4} {
		for i := range n {
			scrub.Add(fmt.Sprintf("sk-bench-%d-0123456789abcdefghijklmnopqrstuvwxyz", i))
		}
		b.Run(fmt.Sprintf("secrets=%d", n), func(b *testing.B) {
			w, err := Create(filepath.Join(b.TempDir(), "t.jsonl"), Options{NoSync: true})
			assert.NilError(b, err)
			defer func() { _ = w.Close() }()
			b.ReportAllocs()
			for b.Loop() {
				_ = w.Write(1, raw{TypeToolCall, payload})
			}
		})
	}
}

// TestSyncFailureIsReported: the sync of a step boundary runs in the background, so its
// failure comes back from a later Write (at the latest the last event's, which waits for
// it) or from Close. /dev/null takes writes but refuses fdatasync (EINVAL).
func TestSyncFailureIsReported(t *testing.T) {
	if fdatasync(devNull(t)) == nil {
		t.Skip("fdatasync of /dev/null succeeds here")
	}
	w, err := Create(os.DevNull, Options{})
	assert.NilError(t, err)
	assert.NilError(t, w.Write(0, raw{TypeStart, nil}), "the sync runs after Write returns")
	_ = w.Write(1, raw{TypeRequest, nil}) // fails or not, depending on the syncer's progress
	assert.ErrorContains(t, w.Write(1, raw{TypeEnd, nil}), "sync transcript")
	assert.ErrorContains(t, w.Write(1, raw{TypeToolCall, nil}), "sync transcript", "every later Write fails")
	assert.NilError(t, w.Close(), "the failure was reported already")

	w, err = Create(os.DevNull, Options{})
	assert.NilError(t, err)
	assert.NilError(t, w.Write(1, raw{TypeRequest, nil}))
	assert.ErrorContains(t, w.Close(), "sync transcript")

	w, err = Create(os.DevNull, Options{})
	assert.NilError(t, err)
	assert.ErrorContains(t, w.Write(0, raw{TypeEnd, nil}), "sync transcript", "the last event syncs before Write returns")
	assert.NilError(t, w.Close())
}

func devNull(t *testing.T) *os.File {
	f, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	assert.NilError(t, err)
	t.Cleanup(func() { _ = f.Close() })
	return f
}

// TestConcurrentWritesWithSync runs step boundaries from several goroutines, as retries
// and tool calls may, under the race detector: every event lands, Close waits for the
// last background sync.
func TestConcurrentWritesWithSync(t *testing.T) {
	path := filepath.Join(t.TempDir(), "t.jsonl")
	w, err := Create(path, Options{})
	assert.NilError(t, err)
	done := make(chan struct{})
	for g := range 4 {
		go func() {
			defer func() { done <- struct{}{} }()
			for i := range 5 {
				assert.Check(t, w.Write(g*10+i, raw{TypeRequest, nil}))
				assert.Check(t, w.Write(g*10+i, raw{TypeToolCall, nil}))
			}
		}()
	}
	for range 4 {
		<-done
	}
	assert.NilError(t, w.Write(0, raw{TypeEnd, nil}))
	assert.NilError(t, w.Close())
	events, err := ReadFile(path)
	assert.NilError(t, err)
	assert.Equal(t, len(events), 41)
}

func TestLongStringsAreCapped(t *testing.T) {
	path := filepath.Join(t.TempDir(), "t.jsonl")
	w, err := Create(path, Options{NoSync: true})
	assert.NilError(t, err)
	long := strings.Repeat("é", MaxStringBytes) // two bytes each: the cut falls inside one
	short := strings.Repeat("s", MaxStringBytes)
	assert.NilError(t, w.Write(1, raw{TypeToolCall, map[string]any{
		"args":  map[string]any{"content": long, "n": json.Number("12345678901234567890")},
		"list":  []any{short, long},
		"plain": "ok",
	}}))
	assert.NilError(t, w.Write(1, raw{TypeEnd, map[string]any{"status": "passed"}}))
	assert.NilError(t, w.Close())
	evs, err := ReadFile(path)
	assert.NilError(t, err)
	var got struct {
		Args  map[string]json.RawMessage
		List  []string
		Plain string
	}
	assert.NilError(t, json.Unmarshal(evs[0].Data, &got))
	var content string
	assert.NilError(t, json.Unmarshal(got.Args["content"], &content))
	assert.Assert(t, utf8.ValidString(content))
	assert.Equal(t, content, CapString(long))
	assert.Assert(t, strings.HasPrefix(content, long[:MaxStringBytes-2]))
	assert.Assert(t, strings.HasSuffix(content, fmt.Sprintf("%d bytes in all, sha256 %x]", len(long), sha256.Sum256([]byte(long)))))
	assert.Equal(t, string(got.Args["n"]), "12345678901234567890", "numbers are kept exactly")
	assert.Equal(t, got.List[0], short, "a string at the cap is kept whole")
	assert.Equal(t, got.Plain, "ok")
}

// raw is a payload of any type with any data, for the writer's own tests.
type raw struct {
	typ  string
	data any
}

func (r raw) Type() string                 { return r.typ }
func (r raw) MarshalJSON() ([]byte, error) { return json.Marshal(r.data) }

// TestEveryPayloadKnowsItsType: Payloads, the reader and the schema are built from the
// payload types, each under the type its Type method names.
func TestEveryPayloadKnowsItsType(t *testing.T) {
	assert.Equal(t, len(Payloads), len(payloads))
	for _, p := range payloads {
		mk, ok := Payloads[p.Type()]
		assert.Assert(t, ok, p.Type())
		assert.Equal(t, reflect.TypeOf(mk()).Elem(), reflect.TypeOf(p), p.Type())
	}
}

// TestRawArgs: a call's arguments are recorded as sent when they are JSON, as a JSON
// string when they are not (the transcript stays valid JSON), and as {} when there are none.
func TestRawArgs(t *testing.T) {
	cases := []struct{ raw, want string }{
		{``, `{}`},
		{`{"b":1, "a":2}`, `{"b":1, "a":2}`},
		{`[1]`, `[1]`},
		{`{"path": "a.go"`, `"{\"path\": \"a.go\""`},
		{`not json`, `"not json"`},
	}
	for _, tc := range cases {
		got := RawArgs(json.RawMessage(tc.raw))
		assert.Equal(t, string(got), tc.want, "%q", tc.raw)
		assert.Assert(t, json.Valid(got))
	}
}
