package tests

import (
	"bytes"
	"encoding/json"
	"fmt"
	"html"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"gotest.tools/v3/assert"

	"github.com/agentrunner/runner/runner/model/fakellm"
)

// secretTask: a task secret that the agent's command prints, failing assertions print
// (the command's output; a file's content and the summary, Go-quoted), and that reaches the model's answers (text, a file path that does not exist, so the
// tool's error quotes it, a file's content, so changes.json diffs it, and the summary).
const secretTask = `name: prop
prompt: Handle the secret.
secrets: [PROPVALUE]
tools: [write_file, read_file, run_in_terminal, run_code]
max_steps: 10
assert:
  - completed: true
  - command: {run: 'printf "secret=%s" "$PROPVALUE"; exit 1'}
  - file_contains: {path: notes.txt, text: not in the file}
  - summary_matches: '^never$'
`

// propertySecrets are the secrets the property runs with: ones that once leaked (a quote
// and a backslash, which JSON escapes on top of Go's quoting) and random ones over the
// whole byte range but NUL (an environment variable cannot hold one), half of them valid
// UTF-8 text. RUNNER_SECRET_SEED replays a run.
func propertySecrets(t *testing.T) []string {
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("RUNNER_SECRET_SEED"); s != "" {
		var err error
		seed, err = strconv.ParseUint(s, 10, 64)
		assert.NilError(t, err)
	}
	t.Logf("RUNNER_SECRET_SEED=%d", seed)
	rng := rand.New(rand.NewPCG(seed, 24))
	out := []string{`pa"ss\word1`, `C:\Users\"x"`, "tab\there\"q\\", "\xff\xfe\"\\abc<&>'"}
	for i := range 6 {
		var b []byte
		for n := 8 + rng.IntN(17); len(b) < n; {
			if i%2 == 0 {
				b = append(b, byte(1+rng.IntN(255)))
				continue
			}
			r := rune(1 + rng.IntN(0x2FFF)) // ASCII, controls, Latin, symbols, CJK...
			if r >= 0xD800 && r < 0xE000 {
				continue
			}
			b = append(b, string(r)...)
		}
		out = append(out, string(b))
	}
	return out
}

// TestRandomSecretsLeaveNoOutput is the property of issue 24 C3: for random task secrets,
// no output of run (console, transcript, result.json, changes.json, --json, JUnit, GitHub
// annotations and job summary), of view and show (pages and terminal text, made by a
// process that does not know the secret, from the files alone) and of bench (bench.json,
// .md, .html) holds the secret in any decoding: raw; every JSON string; HTML and XML
// entities; and within each of those, Go and JSON quoted strings, percent, Markdown and
// workflow-command escapes.
func TestRandomSecretsLeaveNoOutput(t *testing.T) {
	t.Parallel()
	for i, secret := range propertySecrets(t) {
		t.Run(strconv.Itoa(i), func(t *testing.T) {
			t.Parallel()
			first := fakellm.ToolCall("read_file", map[string]any{"path": "a" + secret})
			first.Text = "The secret is " + secret + "."
			srv := fakellm.Start(fakellm.Script{Replies: []fakellm.Reply{
				first,
				fakellm.ToolCall("run_in_terminal", map[string]any{"command": `printf 'it is %s\n' "$PROPVALUE"`}),
				fakellm.ToolCall("t"+secret, map[string]any{}), // "unknown tool %q"
				fakellm.ToolCall("run_code", map[string]any{"language": "python", "code": "print(1)", "env": map[string]any{"A" + secret: "1"}}),
				fakellm.ToolCall("write_file", map[string]any{"path": "notes.txt", "content": "before\n" + secret + "\nafter\n"}),
				doubleEncoded(fakellm.ToolCall("write_file", map[string]any{"path": "more.txt", "content": secret})),
				fakellm.ToolCall("task_complete", map[string]any{"summary": "done: " + secret}),
			}})
			t.Cleanup(srv.Close)
			dir := t.TempDir()
			path := writeTask(t, "prop", secretTask)
			args, env := provider{Name: "ollama"}.args(srv)
			env = append(env, "PROPVALUE="+secret, "GITHUB_ACTIONS=true", "GITHUB_STEP_SUMMARY="+filepath.Join(dir, "summary.md"))
			out := filepath.Join(dir, "out")
			o := runner(t, run{Args: append(append([]string{"run", "--out", out, "--sandbox", "none",
				"--json", filepath.Join(dir, "report.json"), "--junit", filepath.Join(dir, "junit.xml")}, args...), path), Env: env})
			assert.Equal(t, o.Code, 1, "the command assertion fails")
			outputs := []outcome{o}
			for _, a := range [][]string{{"view", out}, {"show", out, "prop"}} {
				v := runner(t, run{Args: a})
				assert.Equal(t, v.Code, 0)
				outputs = append(outputs, v)
			}
			bench := runner(t, run{Args: append(append([]string{"bench", "--repeat", "1", "--sandbox", "none", "--out", filepath.Join(dir, "bench")}, args...), path),
				Env: env, Timeout: 60 * time.Second})
			outputs = append(outputs, bench)
			files := noDecodingReveals(t, dir, outputs, secret)
			for _, f := range []string{"out/prop/transcript.jsonl", "out/prop/result.json", "out/prop/changes.json", "report.json",
				"junit.xml", "summary.md", "out/index.html", "bench/bench.json", "bench/bench.md", "bench/bench.html"} {
				_, err := os.Stat(filepath.Join(dir, f))
				assert.Check(t, err, "every output is checked: %s", f)
			}
			assert.Assert(t, files >= 10)
		})
	}
}

// doubleEncoded sends r's arguments as a JSON string holding the object, as some models
// do: the transcript keeps them as sent.
func doubleEncoded(r fakellm.Reply) fakellm.Reply {
	r.ArgsAs = "string"
	return r
}

// noDecodingReveals fails the test for every file under dir, and every stream of outs,
// from which a decoding gives secret back; it returns how many files it read.
func noDecodingReveals(t *testing.T, dir string, outs []outcome, secret string) int {
	t.Helper()
	check := func(where string, b []byte) {
		if how, ok := reveals(b, secret); ok {
			t.Errorf("%s gives the secret %q back (%s):\n%s", where, secret, how, b)
		}
	}
	for _, o := range outs {
		check("stdout", []byte(o.Stdout))
		check("stderr", []byte(o.Stderr))
	}
	files := 0
	assert.NilError(t, filepath.Walk(dir, func(f string, fi os.FileInfo, err error) error {
		if err != nil || fi.IsDir() {
			return err
		}
		b, err := os.ReadFile(f)
		if err != nil {
			return err
		}
		files++
		check(f, b)
		return nil
	}))
	return files
}

// reveals applies the decodings an output could be read with, two deep, and reports the
// first that gives secret back.
func reveals(b []byte, secret string) (string, bool) {
	views := map[string]string{"raw": string(b), "HTML entities": html.UnescapeString(string(b))}
	for i, s := range jsonStrings(b) {
		views[fmt.Sprintf("JSON string %d", i)] = s
	}
	for name, v := range views {
		for how, d := range decodings(v) {
			if strings.Contains(d, secret) {
				return name + ", then " + how, true
			}
		}
	}
	return "", false
}

// jsonStrings are every string (keys too) of a JSON document or of each line of JSONL.
func jsonStrings(b []byte) []string {
	var out []string
	var walk func(v any)
	walk = func(v any) {
		switch x := v.(type) {
		case string:
			out = append(out, x)
		case []any:
			for _, e := range x {
				walk(e)
			}
		case map[string]any:
			for k, e := range x {
				out = append(out, k)
				walk(e)
			}
		}
	}
	for _, line := range append([][]byte{b}, bytes.Split(b, []byte("\n"))...) {
		var v any
		if json.Unmarshal(line, &v) == nil {
			walk(v)
		}
	}
	return out
}

var quoted = regexp.MustCompile(`"(?:[^"\\]|\\.)*"`)

var percent = regexp.MustCompile(`%[0-9A-Fa-f]{2}`)

var mdEscape = regexp.MustCompile("\\\\([!-/:-@\\[-`{-~])")

// decodings are v read each way a second decoding could take it.
func decodings(v string) map[string]string {
	out := map[string]string{"as is": v, "HTML entities": html.UnescapeString(v)}
	var goq, jsq []string
	for _, q := range quoted.FindAllString(v, -1) {
		if s, err := strconv.Unquote(q); err == nil {
			goq = append(goq, s)
		}
		var s string
		if json.Unmarshal([]byte(q), &s) == nil {
			jsq = append(jsq, s)
		}
	}
	out["Go-quoted strings"] = strings.Join(goq, "\x00")
	out["JSON-quoted strings"] = strings.Join(jsq, "\x00")
	out["percent"] = percent.ReplaceAllStringFunc(v, func(h string) string {
		n, _ := strconv.ParseUint(h[1:], 16, 8)
		return string([]byte{byte(n)})
	})
	out["plus and percent"] = out["percent"]
	if s := strings.ReplaceAll(v, "+", " "); s != v {
		out["plus and percent"] = percent.ReplaceAllStringFunc(s, func(h string) string {
			n, _ := strconv.ParseUint(h[1:], 16, 8)
			return string([]byte{byte(n)})
		})
	}
	out["Markdown"] = mdEscape.ReplaceAllString(v, "$1")
	return out
}
