package policy

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"sync"

	"github.com/mattn/go-isatty"

	"github.com/agentrunner/runner/tools"
)

// Answer is a person's reply to a Question.
type Answer int

// Answers: no, yes (this call), always (this tool for the rest of the run).
const (
	AnswerNo Answer = iota
	AnswerYes
	AnswerAlways
)

// Question is what ask mode shows a person about a call.
type Question struct {
	// Tool is the canonical name; Name the name the model used (maybe an alias).
	Tool, Name string
	Args       tools.Args
	// Files are the paths the call names (path, from, to, ...).
	Files []string
	Risk  tools.Risk
	// NeedsApproval is set when the call overwrites, deletes or replaces files.
	NeedsApproval bool
}

// Asker puts a call to a person. Ask must return when ctx ends.
type Asker interface {
	Ask(ctx context.Context, q Question) (Answer, error)
}

// ask puts a call no rule decided to the user, one question at a time.
func (p *Policy) ask(ctx context.Context, call *tools.Call, ws *tools.Workspace) Decision {
	p.askMu.Lock()
	defer p.askMu.Unlock()
	// While this call waited its turn, the user may have said "always" to its tool.
	if d, ok := p.byRules(call, ws); ok {
		return d
	}
	dynamic := needsApproval(call, ws)
	q := Question{Tool: call.Tool, Name: call.Name, Args: call.Args, Files: filesAffected(call.Args),
		Risk: call.Risk(), NeedsApproval: dynamic}
	ans, err := p.opts.Asker.Ask(ctx, q)
	if err != nil {
		d := p.byDefault(call, dynamic)
		d.Reason = fmt.Sprintf("could not ask the user (%v); %s", err, d.Reason)
		return d
	}
	switch ans {
	case AnswerYes:
		return Decision{Allowed: true, Source: SourceUser, By: "the user", Reason: "the user answered yes"}
	case AnswerAlways:
		r := &rule{ref: "the user", desc: fmt.Sprintf("{tool: %s, action: allow} (answered always)", call.Tool),
			tool: call.Tool, allow: true, user: true,
			reason: fmt.Sprintf("the user answered always: %s is allowed for the rest of the run", call.Tool)}
		p.mu.Lock()
		p.added = append(p.added, r)
		p.mu.Unlock()
		return r.decision()
	}
	return Decision{Source: SourceUser, By: "the user", Reason: "the user answered no",
		Suggestion: "Try another approach that does not need this call."}
}

// filesAffected collects the paths a call names, sorted and without repeats.
func filesAffected(args tools.Args) []string {
	seen := map[string]bool{}
	var out []string
	add := func(v any) {
		if s, ok := v.(string); ok && s != "" && !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	for k, v := range args {
		if k == "path" || k == "from" || k == "to" || k == "cwd" || strings.HasSuffix(k, "_path") {
			add(v)
		}
		if k == "paths" {
			if items, ok := v.([]any); ok {
				for _, it := range items {
					add(it)
				}
			}
		}
	}
	sort.Strings(out)
	return out
}

// IsTerminal reports whether every file is a terminal. Ask mode asks only when stdin and
// stdout both are: IsTerminal(os.Stdin, os.Stdout).
func IsTerminal(files ...*os.File) bool {
	for _, f := range files {
		if f == nil || !(isatty.IsTerminal(f.Fd()) || isatty.IsCygwinTerminal(f.Fd())) {
			return false
		}
	}
	return len(files) > 0
}

// TerminalAsker asks on a terminal: it prints the call and reads y, n or a (always).
type TerminalAsker struct {
	in  io.Reader
	out io.Writer

	start sync.Once
	lines chan string
	err   error // why lines closed; read after the channel is closed
}

// NewTerminalAsker asks on out and reads answers from in (normally os.Stdin, os.Stdout).
func NewTerminalAsker(in *os.File, out io.Writer) *TerminalAsker {
	return &TerminalAsker{in: in, out: out}
}

// read feeds lines to Ask. A read cannot be interrupted, so one goroutine owns the
// input for the asker's life, and Ask waits on the channel or on ctx.
func (a *TerminalAsker) read() {
	a.lines = make(chan string)
	go func() {
		sc := bufio.NewScanner(a.in)
		for sc.Scan() {
			a.lines <- sc.Text()
		}
		a.err = sc.Err()
		if a.err == nil {
			a.err = io.EOF
		}
		close(a.lines)
	}()
}

// maxTries bounds how often an unclear answer is asked again before it counts as no.
const maxTries = 3

// Ask shows the call and waits for an answer.
func (a *TerminalAsker) Ask(ctx context.Context, q Question) (Answer, error) {
	a.start.Do(a.read)
	_, _ = fmt.Fprint(a.out, formatQuestion(q)) // console output: a failed write has nowhere to be reported
	for try := 0; try < maxTries; try++ {
		_, _ = fmt.Fprintf(a.out, "Allow this call? [y]es / [n]o / [a]lways allow %s: ", q.Tool)
		select {
		case <-ctx.Done():
			_, _ = fmt.Fprintln(a.out)
			return AnswerNo, ctx.Err()
		case line, ok := <-a.lines:
			if !ok {
				_, _ = fmt.Fprintln(a.out)
				return AnswerNo, fmt.Errorf("read answer: %w", a.err)
			}
			switch strings.ToLower(strings.TrimSpace(line)) {
			case "y", "yes":
				return AnswerYes, nil
			case "n", "no":
				return AnswerNo, nil
			case "a", "always":
				return AnswerAlways, nil
			}
			_, _ = fmt.Fprintln(a.out, "Please answer y, n or a.")
		}
	}
	return AnswerNo, nil
}

// maxShownValue bounds each argument value shown (file contents can be long).
const maxShownValue = 160

func formatQuestion(q Question) string {
	var b strings.Builder
	b.WriteString("\n── approval needed ──\n")
	name := q.Tool
	if q.Name != "" && q.Name != q.Tool {
		name += " (called as " + q.Name + ")"
	}
	fmt.Fprintf(&b, "tool:   %s\n", name)
	risk := string(q.Risk)
	if q.NeedsApproval {
		risk += "; this call overwrites, deletes or replaces existing files"
	}
	fmt.Fprintf(&b, "risk:   %s\n", risk)
	if len(q.Files) > 0 {
		fmt.Fprintf(&b, "files:  %s\n", strings.Join(q.Files, ", "))
	}
	keys := make([]string, 0, len(q.Args))
	for k := range q.Args {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	b.WriteString("params:\n")
	for _, k := range keys {
		v := CanonicalArgs(tools.Args{"v": q.Args[k]})
		v = strings.TrimSuffix(strings.TrimPrefix(v, `{"v":`), "}")
		if len(v) > maxShownValue {
			v = fmt.Sprintf("%s... (%d bytes)", v[:maxShownValue], len(v))
		}
		fmt.Fprintf(&b, "  %s: %s\n", k, v)
	}
	return b.String()
}
