// Package mcp offers the tools of MCP servers (Model Context Protocol, over stdio) to the
// agent, through the official Go SDK (github.com/modelcontextprotocol/go-sdk). A server
// runs as a tools/exec.Process: in the workspace's sandbox, with its limits and scrubbed
// environment, the workspace as working directory, and killed with everything it started
// when the scenario ends.
//
// Its tools are named SERVER__TOOL: providers accept only ^[a-zA-Z0-9_-]{1,64}$ as tool
// names (OpenAI, Anthropic), so the "server.tool" of other clients is not an option.
package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentrunner/runner/tools"
	"github.com/agentrunner/runner/tools/exec"
)

// Separator joins a server's name and its tool's name (tools.ServerSeparator, which the
// task file's loader knows too).
const Separator = tools.ServerSeparator

// Defaults for Options.
const (
	DefaultStartTimeout = 30 * time.Second
	DefaultCallTimeout  = 60 * time.Second
	// stopGrace is how long a server may take to exit once its stdin is closed, as the
	// MCP spec asks clients to allow, before it is killed.
	stopGrace = 2 * time.Second
	// exitWait is how long a call whose connection broke waits to see the server exit.
	exitWait = time.Second
)

// Options describe one server.
type Options struct {
	// Name prefixes its tools (NAME__tool).
	Name string
	// Argv is the program and its arguments, already resolved (see Resolve).
	Argv []string
	// Env is added to the workspace's environment.
	Env map[string]string
	// StartTimeout bounds start-up, handshake and tool listing; CallTimeout each call.
	StartTimeout, CallTimeout time.Duration
}

// Server is a running MCP server and the tools it offers.
type Server struct {
	opts    Options
	proc    *exec.Process
	session *sdk.ClientSession
	tools   []tools.Tool
}

// Start runs the server in ws (the working directory is ws's root), performs the MCP
// handshake and lists its tools. The server lives until Close or until ctx ends. An error
// names the server and carries what it wrote to stderr.
func Start(ctx context.Context, ws *tools.Workspace, opts Options) (*Server, error) {
	if opts.StartTimeout <= 0 {
		opts.StartTimeout = DefaultStartTimeout
	}
	if opts.CallTimeout <= 0 {
		opts.CallTimeout = DefaultCallTimeout
	}
	proc, err := exec.Start(ctx, ws, ws.Dir(), opts.Argv, opts.Env)
	if err != nil {
		return nil, fmt.Errorf("mcp server %s: %w", opts.Name, err)
	}
	s := &Server{opts: opts, proc: proc}
	fail := func(err error) (*Server, error) {
		if s.session != nil {
			_ = s.session.Close()
		}
		proc.Stop(0) // a server that failed to start gets no grace
		err = fmt.Errorf("mcp server %s: %w", opts.Name, err)
		if code := proc.ExitCode(); code >= 0 {
			err = fmt.Errorf("%w (exit code %d)", err, code)
		}
		if msg := oneLine(proc.Stderr()); msg != "" {
			err = fmt.Errorf("%w; stderr: %s", err, msg)
		}
		return nil, err
	}
	sctx, cancel := context.WithTimeout(ctx, opts.StartTimeout)
	defer cancel()
	// A server that dies during the handshake would otherwise leave Connect waiting for
	// the timeout; its exit ends the wait at once.
	go func() {
		select {
		case <-proc.Exited():
			cancel()
		case <-sctx.Done():
		}
	}()
	client := sdk.NewClient(&sdk.Implementation{Name: "runner", Version: "1"}, nil)
	s.session, err = client.Connect(sctx, &sdk.IOTransport{Reader: proc.Stdout, Writer: proc.Stdin}, nil)
	if err != nil {
		return fail(startError(sctx, proc, "handshake", err))
	}
	for t, err := range s.session.Tools(sctx, nil) {
		if err != nil {
			return fail(startError(sctx, proc, "list tools", err))
		}
		tl, err := s.newTool(t)
		if err != nil {
			return fail(err)
		}
		s.tools = append(s.tools, tl)
	}
	return s, nil
}

// startError says why the handshake or the tool listing failed. A server that dies
// breaks the pipe (a write's EPIPE, a read's EOF) a moment before its exit is seen: unless
// the time ran out, wait that moment, as Execute does, so the error says the server exited.
func startError(ctx context.Context, proc *exec.Process, what string, err error) error {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		select {
		case <-proc.Exited():
			return fmt.Errorf("%s: the server exited", what)
		default:
		}
		return fmt.Errorf("%s: no answer in time: %w", what, err)
	}
	timer := time.NewTimer(exitWait)
	defer timer.Stop()
	select {
	case <-proc.Exited():
		return fmt.Errorf("%s: the server exited", what)
	case <-timer.C:
	}
	return fmt.Errorf("%s: %w", what, err)
}

// oneLine joins a server's stderr into one line for an error message, its last 2 KiB.
func oneLine(s string) string {
	var lines []string
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			lines = append(lines, l)
		}
	}
	out := strings.Join(lines, " | ")
	if len(out) > 2048 {
		out = "..." + out[len(out)-2048:]
	}
	return out
}

// Tools are the server's tools, named NAME__tool, in the order it listed them.
func (s *Server) Tools() []tools.Tool { return s.tools }

// Stderr is what the server wrote to stderr so far (capped).
func (s *Server) Stderr() string { return s.proc.Stderr() }

// Close ends the session and the server: its stdin is closed, it gets a moment to exit,
// then it is killed with every process it started.
func (s *Server) Close() {
	if s.session != nil {
		_ = s.session.Close()
	}
	s.proc.Stop(stopGrace)
}

func (s *Server) newTool(t *sdk.Tool) (tools.Tool, error) {
	name := s.opts.Name + Separator + t.Name
	if !tools.ValidName(name) {
		return nil, fmt.Errorf("tool %q: %q is not a name model providers accept (letters, digits, _ and -, at most 64)", t.Name, name)
	}
	// The SDK's client decodes the schema as JSON into a map; anything else (null, an
	// array, a string) is no schema.
	m, _ := t.InputSchema.(map[string]any)
	if m == nil {
		m = map[string]any{"type": "object"}
	}
	if m["type"] == nil {
		m["type"] = "object"
	}
	if m["type"] != "object" {
		return nil, fmt.Errorf("tool %s: input schema has type %v, want object", t.Name, m["type"])
	}
	schema, err := tools.RawSchema(m)
	if err != nil {
		return nil, fmt.Errorf("tool %s: %w", t.Name, err)
	}
	// The server's read-only hint is taken at its word: the server is the task author's,
	// and still runs in the sandbox. Anything else is dangerous, as run_in_terminal is.
	risk := tools.RiskDangerous
	if t.Annotations != nil && t.Annotations.ReadOnlyHint {
		risk = tools.RiskReadOnly
	}
	return &tool{server: s, remote: t.Name, spec: tools.Spec{Name: name, Description: t.Description, Parameters: schema, Risk: risk}}, nil
}

type tool struct {
	server *Server
	remote string
	spec   tools.Spec
}

func (t *tool) Spec() tools.Spec                                   { return t.spec }
func (t *tool) Validate(tools.Args, *tools.Workspace) *tools.Error { return nil }
func (t *tool) RequiresApproval(tools.Args, *tools.Workspace) bool { return false }

// Execute calls the tool on the server. The result's text content is the output; a result
// the server marks as an error, or a protocol error, is an error result.
func (t *tool) Execute(ctx context.Context, args tools.Args, _ *tools.Workspace) tools.Result {
	ctx, cancel := context.WithTimeout(ctx, t.server.opts.CallTimeout)
	defer cancel()
	res, err := t.server.session.CallTool(ctx, &sdk.CallToolParams{Name: t.remote, Arguments: map[string]any(args)})
	switch {
	case err != nil && errors.Is(ctx.Err(), context.DeadlineExceeded):
		return tools.Failf(tools.CodeTimeout, "Call it with less to do, or try another way.", "%s timed out after %s", t.spec.Name, t.server.opts.CallTimeout)
	case err != nil && (errors.As(err, new(*jsonrpc.Error)) || ctx.Err() != nil):
		// The server answered with an error (or the run is ending).
		return tools.Failf(tools.CodeExecutionError, "Check the arguments against the tool's schema.", "%s: %v", t.spec.Name, err)
	case err != nil:
		// The connection broke. A server that crashed closes its stdout a moment before
		// its exit is seen: wait that moment, so the model is told what happened rather
		// than to check its arguments.
		select {
		case <-t.server.proc.Exited():
			return tools.Failf(tools.CodeExecutionError, "The server is gone; use other tools.", "MCP server %s has exited: %v", t.server.opts.Name, err)
		case <-time.After(exitWait):
		}
		return tools.Failf(tools.CodeExecutionError, "The server is gone; use other tools.", "MCP server %s stopped answering: %v", t.server.opts.Name, err)
	}
	out := capOutput(content(res))
	if res.IsError {
		r := tools.Failf(tools.CodeExecutionError, "Read the message, fix the arguments and try again.", "%s failed", t.spec.Name)
		if out != "" {
			r.Output += "\n" + out
		}
		return r
	}
	return tools.OK(out)
}

// capOutput keeps a result within exec.OutputLimit, as run_in_terminal's output is: the
// first and last halves, with a note of what was left out. (The SDK already bounds a
// message at 16 MiB.)
func capOutput(s string) string {
	if len(s) <= exec.OutputLimit {
		return s
	}
	half := exec.OutputLimit / 2
	return strings.ToValidUTF8(s[:half], "") +
		fmt.Sprintf("\n[... %d bytes left out ...]\n", len(s)-2*half) +
		strings.ToValidUTF8(s[len(s)-half:], "")
}

// content renders a result for the model: text as it is, other content kinds as a note,
// and structured content as JSON when there is no text.
func content(res *sdk.CallToolResult) string {
	var parts []string
	for _, c := range res.Content {
		switch v := c.(type) {
		case *sdk.TextContent:
			parts = append(parts, v.Text)
		case *sdk.ImageContent:
			parts = append(parts, fmt.Sprintf("[image, %s, %d bytes]", v.MIMEType, len(v.Data)))
		case *sdk.AudioContent:
			parts = append(parts, fmt.Sprintf("[audio, %s, %d bytes]", v.MIMEType, len(v.Data)))
		case *sdk.ResourceLink:
			parts = append(parts, fmt.Sprintf("[resource %s]", v.URI))
		case *sdk.EmbeddedResource:
			if v.Resource != nil && v.Resource.Text != "" {
				parts = append(parts, v.Resource.Text)
			} else if v.Resource != nil {
				parts = append(parts, fmt.Sprintf("[resource %s]", v.Resource.URI))
			}
		}
	}
	if len(parts) == 0 && res.StructuredContent != nil {
		if b, err := json.Marshal(res.StructuredContent); err == nil {
			parts = append(parts, string(b))
		}
	}
	return strings.Join(parts, "\n")
}
