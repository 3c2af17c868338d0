package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gotest.tools/v3/assert"
	"gotest.tools/v3/fs"
)

func TestServesScriptAndRecords(t *testing.T) {
	dir := fs.NewDir(t, "fakellm", fs.WithFile("script.json",
		`{"replies": [{"tool_calls": [{"name": "read_file", "args": {"path": "a"}}]}], "models": {"m:1": ["tools"]}}`))
	record := filepath.Join(dir.Path(), "requests.jsonl")

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	pr, pw := io.Pipe()
	var stderr bytes.Buffer
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"-record", record, dir.Join("script.json")}, pw, &stderr)
		_ = pw.Close() // test cleanup: its error does not change what the test checked
	}()
	url, err := bufio.NewReader(pr).ReadString('\n')
	assert.NilError(t, err)
	url = strings.TrimSpace(url)
	assert.Assert(t, strings.HasPrefix(url, "http://127.0.0.1:"), url)

	resp, err := http.Post(url+"/api/chat", "application/json",
		strings.NewReader(`{"model":"m:1","stream":false,"messages":[{"role":"user","content":"hi"}]}`))
	assert.NilError(t, err)
	var chat struct {
		Message struct {
			ToolCalls []struct {
				Function struct {
					Name      string          `json:"name"`
					Arguments json.RawMessage `json:"arguments"`
				} `json:"function"`
			} `json:"tool_calls"`
		} `json:"message"`
		Done bool `json:"done"`
	}
	assert.NilError(t, json.NewDecoder(resp.Body).Decode(&chat))
	_ = resp.Body.Close()
	assert.Assert(t, chat.Done)
	assert.Equal(t, chat.Message.ToolCalls[0].Function.Name, "read_file")
	assert.Equal(t, string(chat.Message.ToolCalls[0].Function.Arguments), `{"path":"a"}`)

	cancel()
	assert.NilError(t, <-done)
	b, err := os.ReadFile(record)
	assert.NilError(t, err)
	assert.Assert(t, strings.Contains(string(b), `"content":"hi"`), string(b))
}

func TestUsageErrors(t *testing.T) {
	var out, stderr bytes.Buffer
	assert.ErrorContains(t, run(context.Background(), nil, &out, &stderr), "want exactly one script file")
	assert.ErrorContains(t, run(context.Background(), []string{"/no/such/script.json"}, &out, &stderr), "read script")
}
