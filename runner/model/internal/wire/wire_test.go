package wire

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"gotest.tools/v3/assert"
)

func TestFix(t *testing.T) {
	tests := []struct {
		name, in, want string
		form           ArgsForm
	}{
		{"openai object to string", `{"choices":[{"message":{"tool_calls":[{"function":{"name":"f","arguments":{"a":1}}}]}}]}`,
			`{"choices":[{"message":{"tool_calls":[{"function":{"arguments":"{\"a\":1}","name":"f"}}]}}]}`, ArgsString},
		{"openai string untouched", `{"function":{"arguments":"{\"a\":1}"}}`, `{"function":{"arguments":"{\"a\":1}"}}`, ArgsString},
		{"ollama string to object", `{"message":{"tool_calls":[{"function":{"arguments":"{\"a\": 12345678901234567890}"}}]}}`,
			`{"message":{"tool_calls":[{"function":{"arguments":{"a":12345678901234567890}}}]}}`, ArgsObject},
		{"ollama malformed string kept", `{"function":{"arguments":"{bad"}}`,
			`{"function":{"arguments":{"\u0000raw_arguments":"{bad"}}}`, ArgsObject},
		{"ollama object untouched", `{"function":{"arguments":{"a":"x"}}}`, `{"function":{"arguments":{"a":"x"}}}`, ArgsObject},
		{"tool's own arguments are not rewritten", `{"function":{"arguments":{"function":{"arguments":"s"}}}}`,
			`{"function":{"arguments":{"function":{"arguments":"s"}}}}`, ArgsObject},
		{"not json", `{"function":{"arguments":"x"`, `{"function":{"arguments":"x"`, ArgsObject},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := string(Fix([]byte(tc.in), tc.form))
			assert.Equal(t, got, tc.want)
		})
	}
}

func TestTransportFixesStreamsAndCapturesErrors(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/sse":
			w.Header().Set("Content-Type", "text/event-stream")
			io.WriteString(w, "data: {\"choices\":[{\"delta\":{\"tool_calls\":[{\"function\":{\"arguments\":{\"p\":\"x\"}}}]}}]}\n\ndata: [DONE]\n\n")
		case "/429":
			w.Header().Set("Retry-After", "7")
			w.WriteHeader(http.StatusTooManyRequests)
		}
	}))
	defer srv.Close()
	c := Client(nil, ArgsString)

	resp, err := c.Get(srv.URL + "/sse")
	assert.NilError(t, err)
	b, _ := io.ReadAll(resp.Body)
	_ = resp.Body.Close() // test cleanup: its error does not change what the test checked
	lines := strings.Split(string(b), "\n")
	assert.Equal(t, lines[0], `data: {"choices":[{"delta":{"tool_calls":[{"function":{"arguments":"{\"p\":\"x\"}"}}]}}]}`)
	assert.Equal(t, lines[2], "data: [DONE]")
	var chunk map[string]any
	assert.NilError(t, json.Unmarshal([]byte(strings.TrimPrefix(lines[0], "data: ")), &chunk))

	ctx, capture := WithCapture(context.Background())
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+"/429", nil)
	resp, err = c.Do(req)
	assert.NilError(t, err)
	_ = resp.Body.Close()
	status, ra := capture.Status()
	assert.Equal(t, status, 429)
	assert.Equal(t, ra, "7")
}

// ReadLine gives each line with its newline, gathers one longer than the reader's
// buffer, ends with the last line and io.EOF, and refuses a line over its bound.
func TestReadLine(t *testing.T) {
	long := strings.Repeat("x", 100)
	br := bufio.NewReaderSize(strings.NewReader("a\n"+long+"\nlast"), 16)
	var gathered []byte
	var lines []string
	for {
		line, err := ReadLine(br, &gathered, 1000)
		lines = append(lines, string(line))
		if err == io.EOF {
			break
		}
		assert.NilError(t, err)
	}
	assert.DeepEqual(t, lines, []string{"a\n", long + "\n", "last"})

	br = bufio.NewReaderSize(strings.NewReader(long+"\n"), 16)
	gathered = nil
	_, err := ReadLine(br, &gathered, 50)
	assert.ErrorIs(t, err, ErrLineTooLong)
}
