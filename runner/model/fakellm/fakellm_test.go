package fakellm_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/ollama/ollama/api"
	"gotest.tools/v3/assert"

	"github.com/agentrunner/runner/runner/model/fakellm"
)

// chat sends one non-streamed /api/chat request for model "m" (see chatAs).
func chat(t *testing.T, srv *fakellm.Server, msgs ...api.Message) string {
	t.Helper()
	return chatAs(t, srv, "m", msgs...)
}

func user(s string) api.Message { return api.Message{Role: "user", Content: s} }

var assistant = api.Message{Role: "assistant", Content: "..."}

func TestConversationsHaveTheirOwnSequence(t *testing.T) {
	srv := fakellm.Start(fakellm.Script{
		Replies: []fakellm.Reply{fakellm.ToolCall("a", nil), fakellm.Text("end")},
		Routes:  []fakellm.Route{{Match: "rename", Replies: []fakellm.Reply{fakellm.ToolCall("r", nil)}, Repeat: true}},
	})
	defer srv.Close()

	assert.Equal(t, chat(t, srv, user("task one")), "call:a")
	assert.Equal(t, chat(t, srv, user("task two")), "call:a") // another conversation starts at the top
	assert.Equal(t, chat(t, srv, user("task one"), assistant), "end")
	assert.Equal(t, chat(t, srv, user("task one"), assistant, assistant), fakellm.ExhaustedText)
	// The same opening with fewer assistant turns is a new run of that conversation.
	assert.Equal(t, chat(t, srv, user("task one")), "call:a")

	for range 3 { // a route with Repeat never finishes
		assert.Equal(t, chat(t, srv, user("please rename Foo"), assistant), "call:r")
	}
	reqs := srv.Requests()
	assert.Equal(t, len(reqs), 8)
	assert.Equal(t, reqs[3].Reply, -1)
	assert.Equal(t, reqs[7].Reply, 0)
	assert.Equal(t, reqs[0].Messages[0].Content, "task one")
}

func TestBenchModeRecordsNothing(t *testing.T) {
	srv := fakellm.Start(fakellm.Script{Bench: true, Repeat: true, Replies: []fakellm.Reply{fakellm.ToolCall("x", nil)}})
	defer srv.Close()
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			assert.Check(t, chat(t, srv, user("go")) == "call:x")
		}()
	}
	wg.Wait()
	assert.Equal(t, srv.Served(), 4)
	assert.Equal(t, len(srv.Requests()), 0)
}

func TestShowDefaultsToAToolModel(t *testing.T) {
	srv := fakellm.Start(fakellm.Script{})
	defer srv.Close()
	u, _ := url.Parse(srv.URL())
	show, err := api.NewClient(u, http.DefaultClient).Show(context.Background(), &api.ShowRequest{Model: "anything:7b"})
	assert.NilError(t, err)
	assert.Equal(t, len(show.Capabilities), 2)
	assert.Equal(t, string(show.Capabilities[1]), "tools")
}

func TestLoadScriptReadsDurations(t *testing.T) {
	s, err := fakellm.LoadScript("testdata/script.json")
	assert.NilError(t, err)
	assert.Equal(t, len(s.Replies), 3)
	assert.Equal(t, s.Replies[0].RetryAfter, "1")
	assert.Equal(t, s.Replies[1].Delay.String(), "1.5s")
	assert.Equal(t, *s.Replies[2].ToolCalls[0].RawArgs, "{oops")
}

// Gemini's stream is server-sent events only with ?alt=sse; without it the real API
// sends one JSON array, so the fake refuses a client that forgets it.
func TestGeminiStreamWantsAltSSE(t *testing.T) {
	srv := fakellm.Start(fakellm.Script{Replies: []fakellm.Reply{fakellm.Text("ok")}})
	defer srv.Close()
	post := func(query string) int {
		req, err := http.NewRequest(http.MethodPost, srv.URL()+"/v1beta/models/m:streamGenerateContent"+query,
			strings.NewReader(`{"contents":[{"role":"user","parts":[{"text":"hi"}]}]}`))
		assert.NilError(t, err)
		req.Header.Set("x-goog-api-key", "k")
		resp, err := http.DefaultClient.Do(req)
		assert.NilError(t, err)
		_ = resp.Body.Close() // test cleanup: its error does not change what the test checked
		return resp.StatusCode
	}
	assert.Equal(t, post(""), http.StatusBadRequest)
	assert.Equal(t, post("?alt=sse"), http.StatusOK)
}

// Two tasks run in parallel whose prompts share words must each get their own script: a
// route that is the whole first message wins over one it merely contains, and a message
// that two routes contain, neither exactly, is an error rather than a guess.
func TestRoutesMatchAConversationExactly(t *testing.T) {
	srv := fakellm.Start(fakellm.Script{Routes: []fakellm.Route{
		{Match: "Fix the bug", Replies: []fakellm.Reply{fakellm.ToolCall("short", nil)}},
		{Match: "Fix the bug in b.go", Replies: []fakellm.Reply{fakellm.ToolCall("long", nil)}},
		{Match: "greet", Replies: []fakellm.Reply{fakellm.ToolCall("greet", nil)}},
		{Match: "world", Replies: []fakellm.Reply{fakellm.ToolCall("world", nil)}},
		{Match: "", Replies: []fakellm.Reply{fakellm.Text("fallback")}},
	}})
	defer srv.Close()

	assert.Equal(t, chat(t, srv, user("Fix the bug in b.go")), "call:long")
	assert.Equal(t, chat(t, srv, user("  Fix the bug\n")), "call:short")
	assert.Equal(t, chat(t, srv, user("Please greet everyone")), "call:greet")
	assert.Equal(t, chat(t, srv, user("something else")), "fallback")

	u, _ := url.Parse(srv.URL())
	stream := false
	err := api.NewClient(u, http.DefaultClient).Chat(context.Background(),
		&api.ChatRequest{Model: "m", Messages: []api.Message{user("greet the world")}, Stream: &stream},
		func(api.ChatResponse) error { return nil })
	assert.ErrorContains(t, err, `matches routes "greet", "world"`)
}

// An agent that opens with a message of its own (Codex sends its environment, then the
// task) is routed by the task it sends after it, but never by what follows an answer.
func TestRoutesMatchAnyOpeningUserMessage(t *testing.T) {
	srv := fakellm.Start(fakellm.Script{Routes: []fakellm.Route{
		{Match: "RIGHT-TASK", Replies: []fakellm.Reply{fakellm.ToolCall("right", nil)}, Repeat: true},
		{Match: "", Replies: []fakellm.Reply{fakellm.Text("fallback")}, Repeat: true},
	}})
	defer srv.Close()
	assert.Equal(t, chat(t, srv, user("<environment_context>cwd</environment_context>"), user("RIGHT-TASK do it")), "call:right")
	later := []api.Message{user("<environment_context>other</environment_context>"), {Role: "assistant", Content: "hi"}, user("RIGHT-TASK")}
	assert.Equal(t, chat(t, srv, later...), "fallback")
}

// Agents on one model and task are told apart by the tools they offer.
func TestRoutesByOfferedTool(t *testing.T) {
	srv := fakellm.Start(fakellm.Script{Routes: []fakellm.Route{
		{Match: "the task", Offers: "Write", Replies: []fakellm.Reply{fakellm.ToolCall("Write", nil)}, Repeat: true},
		{Match: "the task", Offers: "exec_command", Replies: []fakellm.Reply{fakellm.ToolCall("exec_command", nil)}, Repeat: true},
	}})
	defer srv.Close()
	offer := func(tools ...string) string {
		u, _ := url.Parse(srv.URL())
		stream := false
		req := &api.ChatRequest{Model: "m", Messages: []api.Message{user("the task")}, Stream: &stream}
		for _, name := range tools {
			var tool api.Tool
			tool.Type, tool.Function.Name = "function", name
			req.Tools = append(req.Tools, tool)
		}
		var got string
		assert.NilError(t, api.NewClient(u, http.DefaultClient).Chat(context.Background(), req, func(r api.ChatResponse) error {
			for _, c := range r.Message.ToolCalls {
				got += c.Function.Name
			}
			return nil
		}))
		return got
	}
	assert.Equal(t, offer("Read", "Write"), "Write")
	assert.Equal(t, offer("exec_command"), "exec_command")
}
