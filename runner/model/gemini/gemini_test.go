package gemini

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"

	"gotest.tools/v3/assert"

	"github.com/agentrunner/runner/runner/model"
	"github.com/agentrunner/runner/tools/catalog"
)

// A thinking model's thoughtSignature goes back with its call in later requests, the
// results of one turn share a user turn, and the system prompt is the instruction.
func TestRequestMapping(t *testing.T) {
	m, err := New(Config{Model: "gemini-2.5-flash", APIKey: "k"})
	assert.NilError(t, err)
	sig := []byte("opaque-signature")
	c1 := m.toolCall(&part{ThoughtSignature: sig, FunctionCall: &functionCall{Name: "read_file", Args: object(`{"path":"a"}`)}}, 1, 0)
	c2 := m.toolCall(&part{FunctionCall: &functionCall{Name: "list_dir"}}, 1, 1)
	assert.Equal(t, c1.ID, "call_1_1")
	assert.Equal(t, string(c2.Arguments), "{}")
	body, err := m.request(&model.Request{Messages: []model.Message{
		{Role: model.RoleSystem, Content: "sys"},
		{Role: model.RoleUser, Content: "go"},
		{Role: model.RoleAssistant, ToolCalls: []model.ToolCall{c1, c2}},
		{Role: model.RoleTool, ToolCallID: c1.ID, ToolName: "read_file", Content: "A"},
		{Role: model.RoleTool, ToolCallID: c2.ID, ToolName: "list_dir", Content: "B"},
	}})
	assert.NilError(t, err)
	assert.Equal(t, body.SystemInstruction.Parts[0].Text, "sys")
	contents := body.Contents
	assert.Equal(t, len(contents), 3)
	calls := contents[1].Parts
	assert.Equal(t, contents[1].Role, roleModel)
	assert.DeepEqual(t, calls[0].ThoughtSignature, sig)
	assert.Assert(t, calls[1].ThoughtSignature == nil)
	assert.Equal(t, string(calls[0].FunctionCall.Args), `{"path":"a"}`)
	results := contents[2].Parts
	assert.Equal(t, len(results), 2)
	assert.Equal(t, results[1].FunctionResponse.Name, "list_dir")
	b, _ := json.Marshal(results[0].FunctionResponse.Response)
	assert.Equal(t, string(b), `{"output":"A"}`)
}

// Arguments go back as the object the model sent, a string holding one unwrapped, and
// anything else as none; an empty object is left out, as the SDK leaves it out.
func TestArgsObject(t *testing.T) {
	for in, want := range map[string]string{
		`{"a": 1, "n": 12345678901234567890}`:       `{"a":1,"n":12345678901234567890}`,
		`"{\"path\":\"x\"}"`:                        `{"path":"x"}`,
		`{"function":{"arguments":"kept as sent"}}`: `{"function":{"arguments":"kept as sent"}}`,
		`{}`:             ``,
		`"not json"`:     ``,
		`[1,2]`:          ``,
		`null`:           ``,
		``:               ``,
		`{"a":1} trail`:  ``,
		`"[\"x\"]"`:      ``,
		` {"b": true} `:  `{"b":true}`,
		`"{\"s\": {}}"`:  `{"s":{}}`,
		`{"html":"<&>"}`: `{"html":"<&>"}`,
	} {
		assert.Equal(t, string(argsObject(json.RawMessage(in))), want, "%s", in)
	}
}

// A functionCall's args must be an object, as the SDK's map requires; numbers keep
// their digits.
func TestObjectDecoding(t *testing.T) {
	var fc functionCall
	assert.NilError(t, json.Unmarshal([]byte(`{"name":"f","args":{"n":12345678901234567890}}`), &fc))
	assert.Equal(t, string(fc.Args), `{"n":12345678901234567890}`)
	assert.NilError(t, json.Unmarshal([]byte(`{"name":"f","args":null}`), &fc))
	assert.Assert(t, fc.Args == nil)
	assert.ErrorContains(t, json.Unmarshal([]byte(`{"name":"f","args":"{}"}`), &fc), "want an object")
	assert.ErrorContains(t, json.Unmarshal([]byte(`{"name":"f","args":[1]}`), &fc), "want an object")
}

// The endpoints are the SDK's: the API version, the model's resource name, alt=sse for
// the stream; a name the SDK would refuse at every request is refused at once.
func TestEndpoints(t *testing.T) {
	m, err := New(Config{Model: "gemini-2.5-flash", APIKey: "k"})
	assert.NilError(t, err)
	assert.Equal(t, m.generateURL, "https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-flash:generateContent")
	assert.Equal(t, m.streamURL, "https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse")
	m, err = New(Config{Model: "tunedModels/mine", APIKey: "k", BaseURL: "http://proxy:8080/gemini/"})
	assert.NilError(t, err)
	assert.Equal(t, m.generateURL, "http://proxy:8080/gemini/v1beta/tunedModels/mine:generateContent")
	for _, bad := range []string{"a?b", "a&b", "../x"} {
		_, err := New(Config{Model: bad, APIKey: "k"})
		assert.ErrorContains(t, err, "invalid model name")
	}
	_, err = New(Config{Model: "m", APIKey: "k", BaseURL: "http://alice:s3cret@host:bad port/"})
	assert.ErrorContains(t, err, "is not a URL")
	assert.Assert(t, err != nil && !strings.Contains(err.Error(), "s3cret"), "%v", err)
}

// One Model serves parallel scenarios: steps at once share its signatures and tool cache.
func TestConcurrentSteps(t *testing.T) {
	const n = 8
	replies := make([]reply, 2*n)
	for i := range replies {
		replies[i] = ok(firstAnswer)
	}
	rec := startRecorder(t, replies)
	m, err := New(Config{Model: "m", APIKey: "k", BaseURL: rec.URL})
	assert.NilError(t, err)
	specs := catalog.Default().Specs()
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for range n {
		wg.Go(func() {
			resp, err := m.Step(context.Background(), &model.Request{Messages: []model.Message{{Role: model.RoleUser, Content: "go"}}, Tools: specs})
			if err != nil {
				errs <- err
				return
			}
			msgs := []model.Message{{Role: model.RoleUser, Content: "go"}, {Role: model.RoleAssistant, ToolCalls: resp.ToolCalls}}
			_, err = m.Step(context.Background(), &model.Request{Messages: msgs, Tools: specs})
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		assert.NilError(t, err)
	}
	reqs := rec.Requests()
	assert.Equal(t, len(reqs), 2*n)
	signed := 0
	for _, r := range reqs {
		if strings.Contains(string(r.Body), `"thoughtSignature":"c2lnbmF0dXJlLTE="`) {
			signed++
		}
	}
	assert.Equal(t, signed, n)
}

// A cancelled step is the caller's: not temporary, wrapping context.Canceled, and without
// a deadline there is no x-server-timeout.
func TestCancelAndNoDeadline(t *testing.T) {
	rec := startRecorder(t, []reply{ok(secondAnswer)})
	m, err := New(Config{Model: "m", APIKey: "k", BaseURL: rec.URL})
	assert.NilError(t, err)
	_, err = m.Step(context.Background(), hi)
	assert.NilError(t, err)
	assert.Equal(t, rec.Requests()[0].Header.Get("X-Server-Timeout"), "")

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = m.Step(ctx, hi)
	var pe *model.ProviderError
	assert.Assert(t, errors.As(err, &pe))
	assert.Assert(t, !pe.Temporary)
	assert.Assert(t, errors.Is(err, context.Canceled), "%v", err)
}
