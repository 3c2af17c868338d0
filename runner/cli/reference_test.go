package cli

import (
	"bytes"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/goccy/go-yaml"
	"github.com/urfave/cli/v2"
	"gotest.tools/v3/assert"
	"gotest.tools/v3/golden"

	"github.com/agentrunner/runner/runner/model/providers"
	"github.com/agentrunner/runner/runner/session"
	"github.com/agentrunner/runner/runner/task"
)

const referencePage = "../../docs/reference.md"

// TestReferenceIsCurrent: docs/reference.md is generated from the command line itself
// (every command, every flag with its placeholder, default and usage), the environment
// variables runner reads, and the task and suite file schemas; it fails when the
// committed page is stale: `go test ./runner/cli -run TestReference -update` rewrites it.
func TestReferenceIsCurrent(t *testing.T) {
	got := reference(t)
	if golden.FlagUpdate() {
		assert.NilError(t, os.WriteFile(referencePage, got, 0o644))
	}
	want, err := os.ReadFile(referencePage)
	assert.NilError(t, err)
	assert.Assert(t, bytes.Equal(got, want), "%s is stale: run go test ./runner/cli -run TestReference -update", referencePage)
}

// TestReferenceHasEveryFlag: the page names every visible flag of every command, and
// every task file key, so a flag added without a usage still shows up (and a generator
// that dropped rows would fail here, not only in the comparison above).
func TestReferenceHasEveryFlag(t *testing.T) {
	page := string(reference(t))
	app := newApp(IO{Stdout: &bytes.Buffer{}, Stderr: &bytes.Buffer{}})
	for _, c := range commands(app) {
		assert.Check(t, strings.Contains(page, "\n## runner "+c.path+"\n") || strings.Contains(page, "\n### runner "+c.path+"\n"), "command %s", c.path)
		for _, f := range c.cmd.VisibleFlags() {
			assert.Check(t, strings.Contains(page, "`--"+f.Names()[0]), "runner %s --%s", c.path, f.Names()[0])
		}
	}
	for _, k := range task.SuiteKeys {
		assert.Check(t, strings.Contains(page, "| `"+k+"` |"), "task key %s", k)
	}
	for _, k := range task.AssertionKinds {
		assert.Check(t, strings.Contains(page, "`assert[]."+k+"`"), "assertion %s", k)
	}
	for _, p := range providers.Registry {
		for _, e := range p.Env {
			assert.Check(t, strings.Contains(page, "`"+e.Name+"`"), "variable %s", e.Name)
		}
	}
}

type namedCommand struct {
	path string // "bench compare"
	cmd  *cli.Command
}

// commands lists the visible commands and their subcommands, in help's order.
func commands(app *cli.App) []namedCommand {
	var out []namedCommand
	var walk func(prefix string, cs []*cli.Command)
	walk = func(prefix string, cs []*cli.Command) {
		for _, c := range cs {
			if c.Hidden {
				continue
			}
			out = append(out, namedCommand{prefix + c.Name, c})
			walk(prefix+c.Name+" ", c.Subcommands)
		}
	}
	walk("", app.Commands)
	return out
}

// reference renders docs/reference.md.
func reference(t *testing.T) []byte {
	t.Helper()
	app := newApp(IO{Stdout: &bytes.Buffer{}, Stderr: &bytes.Buffer{}})
	var b strings.Builder
	b.WriteString(`# Reference

Every command and flag of ` + "`runner`" + `, the environment variables it reads, and every key of a
task file and of a suite file, on one page to search. Generated from the command line itself and
the task file's schema (` + "`go test ./runner/cli -run TestReference -update`" + `; a test fails when
this page is stale). The topic pages explain: [running](running.md), [task files](task-files.md),
[CI](ci.md), [benchmarking](benchmarking.md).

- [Commands](#commands)
- [Environment variables](#environment-variables)
- [Task file keys](#task-file-keys)
- [Suite file keys](#suite-file-keys)

## Commands

| command | what it does |
|---|---|
`)
	cmds := commands(app)
	for _, c := range cmds {
		fmt.Fprintf(&b, "| [`runner %s`](#%s) | %s |\n", c.path, githubAnchor("runner "+c.path), cell(c.cmd.Usage))
	}
	b.WriteString("\nEvery command takes `--help` (`-h`); `runner --version` prints the version.\n\n" +
		"Exit codes: 0 all passed; 1 a scenario failed (or a tool failed, a call is denied, a bench " +
		"dropped significantly); 2 usage error or invalid task file (nothing ran); 3 none failed but " +
		"some errored ([details](running.md#exit-codes)).\n")
	for _, c := range cmds {
		level := "##"
		if strings.Contains(c.path, " ") {
			level = "###"
		}
		fmt.Fprintf(&b, "\n%s runner %s\n\n", level, c.path)
		usage := "runner " + c.path
		if len(c.cmd.VisibleFlags()) > 0 {
			usage += " [options]"
		}
		if c.cmd.ArgsUsage != "" {
			usage += " " + c.cmd.ArgsUsage
		}
		fmt.Fprintf(&b, "`%s`\n\n%s.\n", usage, cell(strings.TrimSuffix(c.cmd.Usage, ".")))
		// The variables are listed once, below.
		if d := strings.TrimSpace(strings.TrimSuffix(c.cmd.Description, envHelp)); d != "" {
			fmt.Fprintf(&b, "\n```text\n%s\n```\n", d)
		}
		flags := c.cmd.VisibleFlags()
		if len(flags) == 0 {
			continue
		}
		b.WriteString("\n| flag | what it does |\n|---|---|\n")
		for _, f := range flags {
			names, usage, _ := strings.Cut(f.String(), "\t")
			if i := strings.Index(names, " [ "); i > 0 && names[i+3:] == names[:i]+" ]" {
				names = names[:i] + " ..." // a repeatable flag, as help says it
			}
			var parts []string
			for _, n := range strings.Split(names, ", ") {
				parts = append(parts, "`"+n+"`")
			}
			// The one default that depends on the machine: said as the rule, not as this
			// machine's path, so the page is the same everywhere.
			if dir := session.DefaultCacheDir(); dir != "" {
				usage = strings.ReplaceAll(usage, `"`+dir+`"`, "$XDG_CACHE_HOME/runner, else ~/.cache/runner")
			}
			fmt.Fprintf(&b, "| %s | %s |\n", strings.Join(parts, ", "), cell(usage))
		}
	}

	b.WriteString("\n## Environment variables\n\n| variable | read by | what it does |\n|---|---|---|\n")
	seen := map[string]int{}
	type envRow struct{ name, users, help string }
	var envRows []envRow
	for _, p := range providers.Registry {
		for _, e := range p.Env {
			if i, ok := seen[e.Name]; ok {
				envRows[i].users += ", " + p.Name + ":NAME"
				continue
			}
			seen[e.Name] = len(envRows)
			envRows = append(envRows, envRow{e.Name, p.Name + ":NAME", e.Help})
		}
	}
	for _, e := range runnerEnv {
		envRows = append(envRows, envRow{e[0], "runner", e[1]})
	}
	for _, e := range envRows {
		var names []string
		for _, n := range strings.Split(e.name, ", ") {
			names = append(names, "`"+n+"`")
		}
		fmt.Fprintf(&b, "| %s | %s | %s |\n", strings.Join(names, ", "), cell(e.users), cell(e.help))
	}

	b.WriteString("\n## Task file keys\n\nA task file is one YAML document ([Task files](task-files.md)); " +
		"`runner schema` prints its JSON Schema. Unknown keys are errors.\n\n| key | type | what it is |\n|---|---|---|\n")
	taskSchema := schemaDoc(t, task.Schema())
	keyRows(&b, taskSchema, taskSchema, "", 0)

	b.WriteString("\n## Suite file keys\n\nA `" + task.SuiteFile + "` beside or above task files (up to the repository root) " +
		"sets defaults for every task below it ([Suite files](task-files.md#suite-files)); `runner schema suite` prints " +
		"its schema. Each key means what it means in a task file; a task's own value wins, `env:` and `vars:` merge by name.\n\n" +
		"| key | as in a task file |\n|---|---|\n")
	for _, k := range task.SuiteKeys {
		fmt.Fprintf(&b, "| `%s` | [%s](#task-file-keys) |\n", k, k)
	}
	return []byte(b.String())
}

// cell makes text one Markdown table cell: one line, pipes escaped.
func cell(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	return strings.NewReplacer("|", `\|`, "<", "&lt;", ">", "&gt;").Replace(s)
}

// schemaDoc decodes a JSON Schema keeping the order of its properties.
func schemaDoc(t *testing.T, raw []byte) yaml.MapSlice {
	var doc yaml.MapSlice
	assert.NilError(t, yaml.UnmarshalWithOptions(raw, &doc, yaml.UseOrderedMap()))
	return doc
}

func get(m yaml.MapSlice, key string) any {
	for _, it := range m {
		if it.Key == key {
			return it.Value
		}
	}
	return nil
}

// resolve follows a $ref into the root's $defs.
func resolve(root, s yaml.MapSlice) yaml.MapSlice {
	for i := 0; i < 8; i++ {
		ref, _ := get(s, "$ref").(string)
		if ref == "" {
			return s
		}
		defs, _ := get(root, "$defs").(yaml.MapSlice)
		next, _ := get(defs, strings.TrimPrefix(ref, "#/$defs/")).(yaml.MapSlice)
		if next == nil {
			return s
		}
		s = next
	}
	return s
}

// typeOf summarises a property's type: its JSON type, an enum's values, or the shapes of
// a oneOf.
func typeOf(root, s yaml.MapSlice) string {
	if one, ok := get(s, "oneOf").([]any); ok {
		var parts []string
		for _, o := range one {
			if m, ok := o.(yaml.MapSlice); ok {
				parts = append(parts, typeOf(root, m))
			}
		}
		return strings.Join(parts, " or ")
	}
	r := resolve(root, s)
	if enum, ok := get(r, "enum").([]any); ok {
		var vals []string
		for _, v := range enum {
			vals = append(vals, fmt.Sprint(v))
		}
		return strings.Join(vals, ", ")
	}
	switch ty := get(r, "type").(type) {
	case string:
		if ty == "array" {
			if items, ok := get(r, "items").(yaml.MapSlice); ok {
				return "list of " + typeOf(root, items)
			}
		}
		if ref, _ := get(s, "$ref").(string); ref != "" && ty == "string" {
			return strings.TrimPrefix(ref, "#/$defs/")
		}
		return ty
	case []any:
		var parts []string
		for _, x := range ty {
			parts = append(parts, fmt.Sprint(x))
		}
		return strings.Join(parts, " or ")
	}
	return "any"
}

// keyRows writes a row per property of s, and of the objects below it (list items as
// key[].sub), three levels deep.
func keyRows(b *strings.Builder, root, s yaml.MapSlice, prefix string, depth int) {
	props, _ := get(resolve(root, s), "properties").(yaml.MapSlice)
	for _, p := range props {
		key := fmt.Sprint(p.Key)
		ps, _ := p.Value.(yaml.MapSlice)
		desc, _ := get(ps, "description").(string)
		if desc == "" {
			desc, _ = get(resolve(root, ps), "description").(string)
		}
		full := prefix + key
		fmt.Fprintf(b, "| `%s` | %s | %s |\n", full, cell(typeOf(root, ps)), cell(desc))
		if depth >= 2 {
			continue
		}
		sub := resolve(root, ps)
		if items, ok := get(sub, "items").(yaml.MapSlice); ok {
			keyRows(b, root, items, full+"[].", depth+1)
			continue
		}
		for _, alt := range anyOf(get(ps, "oneOf")) {
			keyRows(b, root, alt, full+".", depth+1)
		}
		if get(ps, "oneOf") == nil {
			keyRows(b, root, ps, full+".", depth+1)
		}
	}
}

func anyOf(v any) []yaml.MapSlice {
	list, _ := v.([]any)
	var out []yaml.MapSlice
	for _, x := range list {
		if m, ok := x.(yaml.MapSlice); ok {
			out = append(out, m)
		}
	}
	return out
}
