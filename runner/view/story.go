// Package view turns an output directory into static pages people open first after a
// run: OUT/index.html lists every scenario, OUT/<scenario>/index.html tells one
// scenario's whole story (prompts, steps, tool calls, policy decisions, files, assertions,
// judge, the text diffs). Everything is rebuilt from the result.json files, transcripts
// and changes.json alone, so older, downloaded or merged output works too; the same story
// is printed in the terminal by `runner show` (WriteText).
package view

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strings"

	"github.com/agentrunner/runner/runner/endpoint/forward"
	"github.com/agentrunner/runner/runner/merge"
	"github.com/agentrunner/runner/runner/model"
	"github.com/agentrunner/runner/runner/result"
	"github.com/agentrunner/runner/runner/transcript"
	"github.com/agentrunner/runner/runner/workspace/door"
)

// Page is the file name of the pages: OUT/Page and OUT/<scenario dir>/Page.
const Page = "index.html"

// Entry is one scenario found in an output directory.
type Entry struct {
	result.Scenario
	// Dir is the scenario's directory relative to the output directory, slash-separated.
	Dir string
}

// Load reads the results the output directory's manifests list (merge.ListDir: the
// run's own, SHA-256 checked; a result.json nobody listed, such as one the agent wrote in
// a kept workspace, never shows), in the order a report would list them: failures first
// (failed, then errored, then passed), each group in run order. Where one result file is
// listed twice (--rerun-failed into the same directory) the last one counts.
func Load(out string) ([]Entry, error) {
	// Notes (a manifest not read, and why) are merge's and runner merge's to print.
	listed, err := merge.ListDir(out, merge.Options{})
	if err != nil {
		return nil, fmt.Errorf("view: %w", err)
	}
	entries := make([]Entry, 0, len(listed))
	for _, l := range listed {
		entries = append(entries, Entry{Scenario: l.Scenario, Dir: l.Dir})
	}
	sort.SliceStable(entries, func(i, j int) bool {
		a, b := entries[i], entries[j]
		if ra, rb := rank(a.Status), rank(b.Status); ra != rb {
			return ra < rb
		}
		if a.Model != b.Model {
			return a.Model < b.Model
		}
		if a.Index != b.Index {
			return a.Index < b.Index
		}
		return a.Dir < b.Dir
	})
	return entries, nil
}

// rank orders statuses for "failures first".
func rank(s result.Status) int {
	switch s {
	case result.Failed:
		return 0
	case result.Passed:
		return 2
	default:
		return 1
	}
}

// Story is one scenario's transcript, grouped for reading: what the model was given, each
// step, and what happened after the agent stopped.
type Story struct {
	Entry
	Start       *transcript.Start
	Setup       []transcript.Setup
	Environment *transcript.Environment
	MCP         []transcript.MCP
	// Agent is an external agent's start (its kind, command line, protocol, endpoint)
	// and AgentEnd its end (exit code, finished or not, killed, its output's tail); nil
	// for runner's own loop.
	Agent, AgentEnd *transcript.Agent
	// Turns are the agent's steps (model request, response, tool calls), in order.
	Turns []*Step
	Files *result.FileChanges
	// Diffs are the text diffs of the agent's changes (changes.json), nil when the run
	// recorded none.
	Diffs  *result.Diffs
	Judges []transcript.Judge
	End    *transcript.End
	// Problem says why the transcript could not be read in full ("" when it could).
	Problem string
}

// Step is one model request and what followed it.
type Step struct {
	N        int
	Request  *transcript.Request
	Retries  []transcript.Retry
	ModelErr *transcript.ModelError
	Response *transcript.Response
	Calls    []*Call
	Reminder string
	// Refused are an external agent's requests runner's endpoint refused at this point,
	// before any model saw them (max_steps, a body it could not read): why, each.
	Refused []string
}

// addRequest keeps a request event: the step's request, or one refused there.
func (s *Step) addRequest(r *transcript.Request) {
	if r.Refused != "" {
		s.Refused = append(s.Refused, r.Refused)
		return
	}
	s.Request = r
}

// addAgent keeps an external agent's start and end events.
func (st *Story) addAgent(a *transcript.Agent) {
	switch {
	case a.Exited:
		st.AgentEnd = a
	case st.Agent == nil:
		st.Agent = a
	}
}

// Unanswered are the calls the step's response made that no tool_call event answers:
// an external agent that never sent their result back (it stopped, or ran them as part
// of another), or the loop's calls after task_complete, which are not run.
func (s *Step) Unanswered() []model.ToolCall {
	if s.Response == nil {
		return nil
	}
	var out []model.ToolCall
	for _, c := range s.Response.ToolCalls {
		answered := false
		for _, done := range s.Calls {
			// By id; a transcript without ids (an older one) by name.
			answered = answered || c.ID != "" && done.ID == c.ID || c.ID == "" && done.Name == c.Name
		}
		if !answered {
			out = append(out, c)
		}
	}
	return out
}

// Call is one tool call: the policy's decision and the call with its result.
type Call struct {
	Decision *transcript.Decision
	transcript.ToolCall
}

// ReadStory reads the transcript of the scenario in out/e.Dir. A missing or damaged
// transcript still gives a story (from the result alone) with Problem set.
func ReadStory(out string, e Entry) *Story {
	st := &Story{Entry: e}
	events, err := readTranscript(out, e.Dir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			st.Problem = "no transcript.jsonl in " + e.Dir
		} else {
			st.Problem = err.Error()
		}
	}
	steps := map[int]*Step{}
	stepOf := func(n int) *Step {
		if s, ok := steps[n]; ok {
			return s
		}
		s := &Step{N: n}
		steps[n] = s
		st.Turns = append(st.Turns, s)
		return s
	}
	decisions := map[string]*transcript.Decision{}
	for _, ev := range events {
		p, err := ev.Payload()
		if err != nil {
			if st.Problem == "" {
				st.Problem = err.Error()
			}
			continue
		}
		switch v := p.(type) {
		case *transcript.Start:
			st.Start = v
		case *transcript.Setup:
			st.Setup = append(st.Setup, *v)
		case *transcript.Environment:
			if st.Environment == nil { // the agent's; a second is verify.fresh_container's
				st.Environment = v
			}
		case *transcript.MCP:
			st.MCP = append(st.MCP, *v)
		case *transcript.Request:
			stepOf(ev.Step).addRequest(v)
		case *transcript.Agent:
			st.addAgent(v)
		case *transcript.Retry:
			s := stepOf(ev.Step)
			s.Retries = append(s.Retries, *v)
		case *transcript.ModelError:
			stepOf(ev.Step).ModelErr = v
		case *transcript.Response:
			stepOf(ev.Step).Response = v
		case *transcript.Decision:
			decisions[v.ID] = v
		case *transcript.ToolCall:
			s := stepOf(ev.Step)
			s.Calls = append(s.Calls, &Call{Decision: decisions[v.ID], ToolCall: *v})
			delete(decisions, v.ID)
		case *transcript.Reminder:
			stepOf(ev.Step).Reminder = v.Content
		case *transcript.FilesChanged:
			st.Files = (*result.FileChanges)(v)
		case *transcript.Judge:
			st.Judges = append(st.Judges, *v)
		case *transcript.End:
			st.End = v
		}
	}
	sort.SliceStable(st.Turns, func(i, j int) bool { return st.Turns[i].N < st.Turns[j].N })
	if st.Files == nil {
		st.Files = e.FilesChanged
	}
	st.Diffs = readDiffs(out, e.Dir)
	return st
}

// maxDiffsFile bounds how much of a changes.json is read: runner writes at most about
// 1 MiB of diffs; a bigger file was not written by it and is not shown.
const maxDiffsFile = 4 << 20

// readTranscript reads the transcript in out/dir through the door: however large,
// streamed, a regular file only.
func readTranscript(out, dir string) ([]transcript.Event, error) {
	d, err := door.Open(out)
	if err != nil {
		return nil, err
	}
	defer func() { _ = d.Close() }() // a directory handle: Close loses no data
	f, err := d.Open(path.Join(dir, transcriptFile))
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }() // read only: Close loses no data
	return transcript.Read(f)
}

// transcriptFile is a scenario's transcript in its directory.
const transcriptFile = "transcript.jsonl"

// readDiffs reads a scenario's changes.json in out/dir; nil when there is none or it is
// not one.
func readDiffs(out, dir string) *result.Diffs {
	d, err := door.Open(out)
	if err != nil {
		return nil
	}
	defer func() { _ = d.Close() }() // a directory handle: Close loses no data
	b, err := d.ReadFile(path.Join(dir, result.DiffsFile), maxDiffsFile)
	if err != nil {
		return nil
	}
	var diffs result.Diffs
	if json.Unmarshal(b, &diffs) != nil || len(diffs.Files) == 0 && diffs.Note == "" {
		return nil
	}
	return &diffs
}

// Arg is one argument of a tool call, for reading: strings as they are (a file's
// content, a command), anything else as JSON.
type Arg struct {
	Key   string
	Value string
}

// Args splits a call's JSON object of arguments into its keys, in the order sent; ok is
// false when the arguments are not a JSON object (shown as they are then).
func Args(raw []byte) (args []Arg, ok bool) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, false
	}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, false
		}
		key, _ := t.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, false
		}
		var str string
		if len(v) > 0 && v[0] == '"' && json.Unmarshal(v, &str) == nil {
			args = append(args, Arg{Key: key, Value: str})
			continue
		}
		args = append(args, Arg{Key: key, Value: PrettyJSON(v)})
	}
	return args, true
}

// PrettyJSON indents JSON arguments for reading; anything else is returned as it is.
func PrettyJSON(raw []byte) string {
	var b bytes.Buffer
	if len(raw) > 0 && json.Indent(&b, raw, "", "  ") == nil {
		s := b.String()
		// Arguments sent as one JSON string (invalid JSON kept by the loop) read better bare.
		var str string
		if strings.HasPrefix(s, `"`) && json.Unmarshal(raw, &str) == nil {
			return str
		}
		return s
	}
	return string(raw)
}

// AgentCommand is an external agent's command line as a person reads it: its arguments
// joined, without the forwarder runner puts in front of it in a sandbox with a network
// of its own (forwarded is then true).
func AgentCommand(argv []string) (cmd string, forwarded bool) {
	if len(argv) > 4 && argv[1] == forward.Arg {
		argv, forwarded = argv[4:], true
	}
	return strings.Join(argv, " "), forwarded
}
