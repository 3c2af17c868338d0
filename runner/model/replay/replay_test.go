package replay_test

import (
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gotest.tools/v3/assert"

	"github.com/agentrunner/runner/runner/model"
	"github.com/agentrunner/runner/runner/model/fakellm"
	"github.com/agentrunner/runner/runner/model/providers"
	"github.com/agentrunner/runner/runner/model/replay"
	"github.com/agentrunner/runner/tools"
)

var specs = []tools.Spec{{
	Name: "read_file", Description: "Read a file",
	Parameters: tools.Object(map[string]*tools.Schema{"path": tools.String("the path")}, "path"),
}}

func conversation(prompt string) *model.Request {
	return &model.Request{
		Messages: []model.Message{{Role: model.RoleSystem, Content: "be brief"}, {Role: model.RoleUser, Content: prompt}},
		Tools:    specs,
	}
}

// then appends an answered step to req, with the call id the loop would give it.
func then(req *model.Request, resp *model.Response, result string) *model.Request {
	calls := append([]model.ToolCall(nil), resp.ToolCalls...)
	for i := range calls {
		calls[i].ID = "call_x_" + calls[i].Name
	}
	next := &model.Request{Tools: req.Tools, Options: req.Options, Messages: append(append([]model.Message(nil), req.Messages...),
		model.Message{Role: model.RoleAssistant, Content: resp.Content, ToolCalls: calls})}
	for _, c := range calls {
		next.Messages = append(next.Messages, model.Message{Role: model.RoleTool, ToolCallID: c.ID, ToolName: c.Name, Content: result})
	}
	return next
}

// A conversation recorded against a server plays back with the server gone, the same
// responses in the same order; the cassette keeps no key and no URL password, even one
// the conversation itself carried.
func TestRecordThenReplayOffline(t *testing.T) {
	const key, password = "sk-live-0123456789abcdef", "hunter2-pass"
	srv := fakellm.Start(fakellm.Script{Replies: []fakellm.Reply{
		fakellm.ToolCall("read_file", map[string]string{"path": "notes.txt"}),
		{Text: "done", Usage: &fakellm.Usage{PromptTokens: 77, CompletionTokens: 5}},
	}})
	base := strings.Replace(srv.OpenAIURL(), "http://", "http://alice:"+password+"@", 1)
	env := map[string]string{"OPENAI_BASE_URL": base, "OPENAI_API_KEY": key}
	dir := filepath.Join(t.TempDir(), "cassette")
	ctx := context.Background()

	live, err := providers.Open("openai:fake", providers.OpenOptions{Record: dir, Scenario: "read-notes", Getenv: func(k string) string { return env[k] }})
	assert.NilError(t, err)
	req1 := conversation("Read notes.txt; the password is " + password)
	resp1, err := live.Step(ctx, req1)
	assert.NilError(t, err)
	req2 := then(req1, resp1, "line one")
	resp2, err := live.Step(ctx, req2)
	assert.NilError(t, err)
	assert.Equal(t, resp2.Content, "done")
	srv.Close()

	var files []string
	assert.NilError(t, filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			b, rerr := os.ReadFile(path)
			assert.NilError(t, rerr)
			assert.Assert(t, !strings.Contains(string(b), key), "%s holds the API key", path)
			assert.Assert(t, !strings.Contains(string(b), password), "%s holds the URL password", path)
			assert.Assert(t, !strings.Contains(string(b), "alice"), "%s holds the URL user", path)
			files = append(files, strings.TrimPrefix(path, dir+"/"))
		}
		return err
	}))
	assert.Equal(t, len(files), 4, "index, two responses, one tool list: %v", files)
	b, err := os.ReadFile(filepath.Join(dir, "read-notes", "001-"+mustHash(t, req1)[:12]+".json"))
	assert.NilError(t, err)
	assert.Assert(t, strings.Contains(string(b), "the password is [REDACTED]"), "%s", b)

	for _, spec := range []string{"openai:fake", "replay:" + dir} {
		o := providers.OpenOptions{Scenario: "read-notes"}
		if !strings.HasPrefix(spec, "replay:") {
			o.Replay = dir
		}
		played, err := providers.Open(spec, o)
		assert.NilError(t, err, spec)
		assert.Equal(t, played.Name(), "openai:fake", spec)
		got1, err := played.Step(ctx, req1)
		assert.NilError(t, err, spec)
		assert.DeepEqual(t, got1, resp1)
		got2, err := played.Step(ctx, then(req1, got1, "line one"))
		assert.NilError(t, err, spec)
		assert.DeepEqual(t, got2, resp2)
		assert.Equal(t, got2.Usage.PromptTokens, 77)
	}
}

func mustHash(t *testing.T, req *model.Request) string {
	n, _, err := replay.Normalise(req)
	assert.NilError(t, err)
	return n.Hash()
}

// A request the cassette does not hold is an error naming the scenario, the step and
// where it parts from the nearest recording; it is not retried and reaches no server.
func TestMissNamesScenarioStepAndDiff(t *testing.T) {
	srv := fakellm.Start(fakellm.Script{Replies: []fakellm.Reply{fakellm.ToolCall("read_file", map[string]string{"path": "a"}), fakellm.Text("ok")}})
	defer srv.Close()
	dir := t.TempDir()
	env := map[string]string{"OPENAI_BASE_URL": srv.OpenAIURL()}
	live, err := providers.Open("openai:fake", providers.OpenOptions{Record: dir, Scenario: "s1", Getenv: func(k string) string { return env[k] }})
	assert.NilError(t, err)
	req1 := conversation("Rename OldName to NewName everywhere")
	resp1, err := live.Step(context.Background(), req1)
	assert.NilError(t, err)
	_, err = live.Step(context.Background(), then(req1, resp1, "contents"))
	assert.NilError(t, err)
	served := srv.Served()

	played, err := providers.Open("openai:fake", providers.OpenOptions{Replay: dir, Scenario: "s1"})
	assert.NilError(t, err)
	_, err = played.Step(context.Background(), conversation("Rename OldName to BetterName everywhere"))
	var miss *replay.MissError
	assert.Assert(t, errors.As(err, &miss), "%v", err)
	assert.Equal(t, miss.Step, 1)
	assert.Equal(t, miss.Scenario, "s1")
	msg := err.Error()
	for _, want := range []string{`replay miss: scenario "s1", step 1: `, "(model openai:fake)", "/s1/001-", `messages[1].content (user): recorded "Rename OldName to NewName everywhere", now "Rename OldName to BetterName everywhere"`} {
		assert.Assert(t, strings.Contains(msg, want), "%q not in %s", want, msg)
	}
	// Step 2 with a different tool result: the nearest is step 2, and the diff says so.
	_, err = played.Step(context.Background(), then(req1, resp1, "other contents"))
	assert.ErrorContains(t, err, `step 2`)
	assert.ErrorContains(t, err, `messages[3].content (tool): recorded "contents", now "other contents"`)
	// A different model is a miss too, even with the same conversation.
	other, err := providers.Open("ollama:x", providers.OpenOptions{Replay: dir, Scenario: "s1"})
	assert.NilError(t, err)
	_, err = other.Step(context.Background(), req1)
	assert.ErrorContains(t, err, "holds no recordings of model ollama:x")
	assert.Equal(t, srv.Served(), served, "a replay reached the server")

	_, err = providers.Open("replay:"+filepath.Join(dir, "nothing"), providers.OpenOptions{})
	assert.ErrorContains(t, err, "holds no recordings")
}

// fixed is a model that answers from a list, for recording without a server.
type fixed struct {
	name  string
	resps []*model.Response
	n     int
}

func (f *fixed) Name() string { return f.name }
func (f *fixed) Step(context.Context, *model.Request) (*model.Response, error) {
	r := f.resps[f.n%len(f.resps)]
	f.n++
	b, _ := json.Marshal(r)
	var out model.Response
	_ = json.Unmarshal(b, &out)
	return &out, nil
}

// The same request asked twice (--repeat) is recorded twice and played back in order;
// call ids and the form of the arguments do not change the key.
func TestOccurrencesAndNormalisation(t *testing.T) {
	dir := t.TempDir()
	c, err := replay.Open(dir, func(string) string { return "" })
	assert.NilError(t, err)
	rec := replay.Record(&fixed{name: "ollama:q", resps: []*model.Response{{Content: "first"}, {Content: "second"}}}, c, "s")
	req := conversation("hi")
	for _, want := range []string{"first", "second"} {
		r, err := rec.Step(context.Background(), req)
		assert.NilError(t, err)
		assert.Equal(t, r.Content, want)
	}
	p := replay.Play(c, "ollama:q", "s")
	for _, want := range []string{"first", "second", "second"} {
		r, err := p.Step(context.Background(), req)
		assert.NilError(t, err)
		assert.Equal(t, r.Content, want)
	}

	// Another scenario asking the same question keeps its own answer; one that never
	// recorded it gets the first scenario's.
	_, err = replay.Record(&fixed{name: "ollama:q", resps: []*model.Response{{Content: "other"}}}, c, "s2").Step(context.Background(), req)
	assert.NilError(t, err)
	for scenario, want := range map[string]string{"s2": "other", "s3": "first"} {
		r, err := replay.Play(c, "ollama:q", scenario).Step(context.Background(), req)
		assert.NilError(t, err)
		assert.Equal(t, r.Content, want, scenario)
	}

	a := then(req, &model.Response{ToolCalls: []model.ToolCall{{ID: "abc", Name: "read_file", Arguments: json.RawMessage(`{"path":"x","n":12345678901234567890}`)}}}, "r")
	b := then(req, &model.Response{ToolCalls: []model.ToolCall{{ID: "zzz", Name: "read_file", Arguments: json.RawMessage(`"{\"n\": 12345678901234567890, \"path\": \"x\"}"`)}}}, "r")
	b.Messages[3].ToolCallID = "other"
	assert.Equal(t, mustHash(t, a), mustHash(t, b))
	b.Messages[3].Content = "r2"
	assert.Assert(t, mustHash(t, a) != mustHash(t, b))
	// What a command prints that changes by itself does not change the key.
	out := func(when, took, ws string) *model.Request {
		return then(req, &model.Response{ToolCalls: []model.ToolCall{{Name: "run_in_terminal", Arguments: json.RawMessage(`{}`)}}},
			"Executed at: "+when+"\nok  example.com/x\t"+took+"\n/tmp/"+ws+"/go.mod\nran 3 tests in 12ms")
	}
	assert.Equal(t, mustHash(t, out("2026-11-23T19:06:03Z", "0.004s", "runner-fix-1234567")),
		mustHash(t, out("2027-01-02T03:04:05.123+01:00", "1.250s", "runner-fix-98765")))
	assert.Assert(t, mustHash(t, out("2026-11-23T19:06:03Z", "0.004s", "runner-fix-1")) != mustHash(t, then(req, &model.Response{}, "FAIL")))

	opts := *a
	opts.Options.MaxTokens = 10
	assert.Assert(t, mustHash(t, a) != mustHash(t, &opts))
}

// An external agent's own text (its system prompt, its user turns) holds today's date
// and its session's id: they do not change the key of its requests, and still do for
// the built-in loop's, whose cassettes keep their keys.
func TestExternalAgentsDatesAndIDsAreMasked(t *testing.T) {
	ask := func(external bool, date, id string) *model.Request {
		return &model.Request{External: external, Messages: []model.Message{
			{Role: model.RoleSystem, Content: "Today's date is " + date + ". Session " + id + "."},
			{Role: model.RoleUser, Content: "<context>started " + date + "</context> fix it"},
		}}
	}
	a := ask(true, "2026-11-28", "0b9d6f7e-1c2a-4e5f-9a8b-7c6d5e4f3a2b")
	b := ask(true, "2027-01-02", "f1e2d3c4-b5a6-4978-8695-a4b3c2d1e0f9")
	assert.Equal(t, mustHash(t, a), mustHash(t, b))
	// Codex's tool output: a random chunk id and the measured wall time.
	out := func(id, wall string) *model.Request {
		r := ask(true, "2026-11-28", "x")
		r.Messages = append(r.Messages, model.Message{Role: model.RoleAssistant, ToolCalls: []model.ToolCall{{ID: "c", Name: "exec_command", Arguments: json.RawMessage(`{}`)}}},
			model.Message{Role: model.RoleTool, ToolCallID: "c", Content: "Chunk ID: " + id + "\nWall time: " + wall + " seconds\nProcess exited with code 0\nOutput:\nok\n"})
		return r
	}
	assert.Equal(t, mustHash(t, out("3f9a2c", "0.0213")), mustHash(t, out("a0b1c2", "1.5000")))
	assert.Assert(t, mustHash(t, out("3f9a2c", "0.0213")) != mustHash(t, then(ask(true, "2026-11-28", "x"), &model.Response{}, "FAIL")))
	c := ask(true, "2027-01-02", "f1e2d3c4-b5a6-4978-8695-a4b3c2d1e0f9")
	c.Messages[1].Content += " now"
	assert.Assert(t, mustHash(t, a) != mustHash(t, c), "what it asks still counts")
	assert.Assert(t, mustHash(t, ask(false, "2026-11-28", "x")) != mustHash(t, ask(false, "2027-01-02", "x")))
}

// A cassette comes with a pull request, so its index is input from whoever wrote it: an
// entry naming a file outside the cassette directory (a path with .., an absolute path,
// a link inside the cassette pointing out) is refused with the entry's name, never read.
// Before the check, the outside file below was served as the recorded answer.
func TestCassetteFilesOutsideTheDirectoryAreRefused(t *testing.T) {
	req := conversation("Read notes.txt")
	n, _, err := replay.Normalise(req)
	assert.NilError(t, err)
	outside := replay.Recording{Model: "openai:fake", Scenario: "s", Step: 1, Response: model.Response{Content: "FROM OUTSIDE"}}
	body, err := json.Marshal(outside)
	assert.NilError(t, err)

	for _, tc := range []struct{ name, file, want string }{
		{"dot-dot", "../../etc/passwd", `"../../etc/passwd" leaves the cassette directory`},
		{"dot-dot to a recording", "../outside.json", `"../outside.json" leaves the cassette directory`},
		{"absolute", "/etc/passwd", `"/etc/passwd" leaves the cassette directory`},
		{"link out", "s/001-link.json", `s/001-link.json: leaves the cassette directory`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			parent := t.TempDir()
			dir := filepath.Join(parent, "cassette")
			assert.NilError(t, os.MkdirAll(filepath.Join(dir, "s"), 0o755))
			assert.NilError(t, os.WriteFile(filepath.Join(parent, "outside.json"), body, 0o644))
			assert.NilError(t, os.Symlink(filepath.Join(parent, "outside.json"), filepath.Join(dir, "s", "001-link.json")))
			idx := replay.Index{Version: 1, Entries: []replay.Entry{{Model: "openai:fake", Hash: n.Hash(), Scenario: "s", Step: 1, File: tc.file}}}
			b, err := json.Marshal(idx)
			assert.NilError(t, err)
			assert.NilError(t, os.WriteFile(filepath.Join(dir, replay.IndexFile), b, 0o644))

			played, err := providers.Open("openai:fake", providers.OpenOptions{Replay: dir, Scenario: "s"})
			if err == nil {
				var resp *model.Response
				resp, err = played.Step(context.Background(), req)
				if err == nil {
					t.Fatalf("the cassette served %q from outside its directory", resp.Content)
				}
			}
			assert.ErrorContains(t, err, tc.want)
			assert.ErrorContains(t, err, "cassette")
		})
	}
}
