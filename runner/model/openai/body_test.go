package openai

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"gotest.tools/v3/assert"

	"github.com/agentrunner/runner/runner/model"
	"github.com/agentrunner/runner/tools"
)

// TestSplicedBodyIsGoOpenAIs: over a growing conversation, the body splicer sends is byte
// for byte the one go-openai sends when it encodes the whole conversation itself.
func TestSplicedBodyIsGoOpenAIs(t *testing.T) {
	for _, stream := range []bool{false, true} {
		t.Run(fmt.Sprintf("stream=%v", stream), func(t *testing.T) {
			var mu sync.Mutex
			var bodies [][]byte
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				b, _ := io.ReadAll(r.Body)
				mu.Lock()
				bodies = append(bodies, b)
				mu.Unlock()
				w.WriteHeader(http.StatusTeapot) // the body is all this test wants
			}))
			defer srv.Close()
			spliced, err := New(Config{Model: `gpt-4o-"mini"`, BaseURL: srv.URL, Stream: stream})
			assert.NilError(t, err)
			assert.Assert(t, spliced.splice, "go-openai encodes requests as splicer expects")
			whole, err := New(Config{Model: `gpt-4o-"mini"`, BaseURL: srv.URL, Stream: stream})
			assert.NilError(t, err)
			whole.splice = false

			temp := 0.0
			req := &model.Request{
				Messages: []model.Message{{Role: model.RoleSystem, Content: "<sys> & \u2028"}, {Role: model.RoleUser, Content: "go"}},
				Tools:    []tools.Spec{{Name: "read_file", Description: "Read.", Parameters: tools.Object(map[string]*tools.Schema{"path": tools.String("P.")}, "path")}},
				Options:  model.Options{Temperature: &temp, MaxTokens: 10},
			}
			for _, a := range []string{`{"path":"a.go","n":1.50}`, `"{\"path\":\"b.go\"}"`, `"not json"`, ``} {
				req.Messages = append(req.Messages,
					model.Message{Role: model.RoleAssistant, ToolCalls: []model.ToolCall{{ID: "c", Name: "read_file", Arguments: json.RawMessage(a)}}},
					model.Message{Role: model.RoleTool, ToolCallID: "c", Content: "result <&>"})
				for _, m := range []*Model{spliced, whole} {
					_, err := m.Step(context.Background(), req)
					assert.ErrorContains(t, err, "418")
				}
				mu.Lock()
				assert.Equal(t, len(bodies), 2)
				assert.Equal(t, string(bodies[0]), string(bodies[1]))
				bodies = bodies[:0]
				mu.Unlock()
			}
		})
	}
}
