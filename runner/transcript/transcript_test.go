package transcript

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"gotest.tools/v3/assert"
)

func TestWriteRead(t *testing.T) {
	path := filepath.Join(t.TempDir(), "transcript.jsonl")
	fixed := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	w, err := Create(path, Options{Now: func() time.Time { return fixed }})
	assert.NilError(t, err)
	assert.NilError(t, w.Write(TypeStart, 0, map[string]string{"model": "oracle"}))
	assert.NilError(t, w.Write(TypeToolCall, 1, map[string]any{"tool": "read_file"}))

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
	defer w.Close()
	err = w.Write(TypeEnd, 0, map[string]any{"bad": make(chan int)})
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
	defer w.Close()
	payload := map[string]any{"tool": "read_file", "args": map[string]string{"path": "main.go"}}
	b.ReportAllocs()
	for b.Loop() {
		_ = w.Write(TypeToolCall, 1, payload)
	}
}
