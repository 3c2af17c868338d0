// Package importer turns task directories of public agent benchmarks into runner task
// files that use an environment: (see runner/importer/terminalbench and
// runner/importer/harbor). A format's package reads one task directory into a Spec; this
// package finds the task directories, writes each Spec as a task file and reports, per
// task, what could not be carried over.
package importer

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/goccy/go-yaml"
)

// Spec is one imported task, in runner's terms. Paths are absolute.
type Spec struct {
	Name, Description, Prompt string
	Tags                      []string
	// Timeout is the agent's time limit (the scenario timeout); TestTimeout the verifier's.
	Timeout, TestTimeout time.Duration
	// Dockerfile (built, its directory the context) or Image.
	Dockerfile, Image string
	Workdir           string // "" for runner's default, /app
	Network           bool
	CPUs              float64
	MemoryMB          int
	User              string
	Env               map[string]string
	// VerifyCopy is a directory and VerifyFiles inline files copied to /tests after the agent.
	VerifyCopy  string
	VerifyFiles map[string]string
	// TestCommand runs the tests; Format is "pytest" to parse its -rA output per test.
	TestCommand, Format string
	// ScoreFile is a reward file the tests write; RewardPasses adds an assertion that it
	// holds 1 (the format's own pass criterion).
	ScoreFile    string
	RewardPasses bool
	// FreshContainer verifies in a new container of the image, on the final workspace
	// (verify.fresh_container), not in the agent's.
	FreshContainer bool
	// AgentContainer, when the tests run in the agent's container, says why: a comment on
	// the task file's verify:.
	AgentContainer string
	// Solution is the reference solution script ("" when there is none).
	Solution string
	// Notes are features that could not be carried over, reported to the user.
	Notes []string
}

// solutionFile is where the reference writes the solution script in the workspace; the
// run removes it again, so tests that look for stray files do not see it.
const solutionFile = ".runner-solution.sh"

// solutionTimeout is run_in_terminal's longest timeout: a reference gets all of it.
const solutionTimeout = 300

// Marshal renders the task file, with paths relative to outDir (the file's directory).
func (s Spec) Marshal(outDir string) ([]byte, error) {
	var doc yaml.MapSlice
	add := func(k string, v any) { doc = append(doc, yaml.MapItem{Key: k, Value: v}) }
	add("name", s.Name)
	if s.Description != "" {
		add("description", text(s.Description))
	}
	if len(s.Tags) > 0 {
		add("tags", s.Tags)
	}
	add("prompt", text(s.Prompt))
	if s.Timeout > 0 {
		add("timeout", s.Timeout.String())
	}
	add("max_steps", 100)
	if len(s.Env) > 0 {
		add("env", s.Env)
	}
	add("environment", s.environment(outDir))
	comments := yaml.CommentMap{}
	if verify := s.verify(outDir); len(verify) > 0 {
		add("verify", verify)
		if s.AgentContainer != "" {
			comments["$.verify"] = []*yaml.Comment{yaml.HeadComment(wrap("verify.fresh_container is not set: "+s.AgentContainer+".", 90)...)}
		}
	}
	add("assert", s.assertions())
	if s.ScoreFile != "" {
		add("score", yaml.MapSlice{{Key: "file", Value: s.ScoreFile}})
	}
	if s.Solution != "" {
		add("reference", s.reference())
	}
	body, err := yaml.MarshalWithOptions(doc, yaml.UseLiteralStyleIfMultiline(true), yaml.IndentSequence(true), yaml.WithComment(comments))
	if err != nil {
		return nil, fmt.Errorf("task %s: %w", s.Name, err)
	}
	return append([]byte("# yaml-language-server: $schema=https://raw.githubusercontent.com/agentrunner/runner/main/runner/task/task.schema.json\n"), body...), nil
}

// environment is the task file's environment: the image or Dockerfile and the
// container's limits.
func (s Spec) environment(outDir string) yaml.MapSlice {
	var env yaml.MapSlice
	add := func(k string, v any) { env = append(env, yaml.MapItem{Key: k, Value: v}) }
	if s.Dockerfile != "" {
		add("dockerfile", rel(outDir, s.Dockerfile))
	} else {
		add("image", s.Image)
	}
	if s.Workdir != "" {
		add("workdir", s.Workdir)
	}
	add("network", s.Network)
	if s.CPUs > 0 {
		add("cpus", s.CPUs)
	}
	if s.MemoryMB > 0 {
		add("memory_mb", s.MemoryMB)
	}
	if s.User != "" {
		add("user", s.User)
	}
	return env
}

// verify is the task file's verify: what is copied in after the agent, and where the
// tests run; empty when there is nothing to say.
func (s Spec) verify(outDir string) yaml.MapSlice {
	var verify yaml.MapSlice
	if s.VerifyCopy != "" {
		verify = append(verify, yaml.MapItem{Key: "copy", Value: rel(outDir, s.VerifyCopy)})
	}
	if len(s.VerifyFiles) > 0 {
		files := yaml.MapSlice{}
		for _, name := range sortedKeys(s.VerifyFiles) {
			files = append(files, yaml.MapItem{Key: name, Value: text(s.VerifyFiles[name])})
		}
		verify = append(verify, yaml.MapItem{Key: "files", Value: files})
	}
	if s.FreshContainer {
		verify = append(verify, yaml.MapItem{Key: "fresh_container", Value: true})
	}
	return verify
}

// assertions are the task file's assert: the test command, and the reward check when
// the format's pass criterion is a reward of 1.
func (s Spec) assertions() []any {
	check := yaml.MapSlice{{Key: "run", Value: text(s.TestCommand)}}
	if s.Format != "" {
		check = append(check, yaml.MapItem{Key: "format", Value: s.Format})
	}
	if s.TestTimeout > 0 {
		check = append(check, yaml.MapItem{Key: "timeout", Value: s.TestTimeout.String()})
	}
	asserts := []any{yaml.MapSlice{{Key: "command", Value: check}}}
	if s.RewardPasses {
		asserts = append(asserts, yaml.MapSlice{{Key: "command", Value: yaml.MapSlice{
			{Key: "run", Value: RewardCheck(s.ScoreFile)},
		}}})
	}
	return asserts
}

// reference is the task file's reference run: write the solution script, run it (and
// remove it), complete.
func (s Spec) reference() []any {
	run := fmt.Sprintf("if command -v bash >/dev/null 2>&1; then bash %[1]s; else sh %[1]s; fi; rc=$?; rm -f %[1]s; exit $rc", solutionFile)
	return []any{
		yaml.MapSlice{{Key: "write_file", Value: yaml.MapSlice{{Key: "path", Value: solutionFile}, {Key: "content", Value: text(s.Solution)}}}},
		yaml.MapSlice{{Key: "run_in_terminal", Value: yaml.MapSlice{{Key: "command", Value: run}, {Key: "timeout_seconds", Value: solutionTimeout}}}},
		yaml.MapSlice{{Key: "task_complete", Value: yaml.MapSlice{{Key: "summary", Value: "Ran the reference solution."}}}},
	}
}

// wrap breaks s into lines of at most width bytes at spaces (a longer word stays whole),
// each starting with a space, for a comment.
func wrap(s string, width int) []string {
	var lines []string
	line := ""
	for _, w := range strings.Fields(s) {
		if line != "" && len(line)+1+len(w) > width {
			lines = append(lines, line)
			line = ""
		}
		line += " " + w
	}
	return append(lines, line)
}

// quoted is a string written as a double-quoted YAML scalar (JSON's escapes are YAML's).
type quoted string

// MarshalYAML implements yaml.BytesMarshaler.
func (q quoted) MarshalYAML() ([]byte, error) { return json.Marshal(string(q)) }

// text keeps readable block literals for ordinary scripts and prompts, and quotes what a
// block literal cannot hold exactly (a first line that starts with a blank, CR, tabs,
// trailing blank lines, no final newline).
func text(s string) any {
	if !strings.Contains(s, "\n") {
		return s
	}
	safe := !strings.ContainsAny(s, "\r\t") && !strings.HasPrefix(s, " ") &&
		strings.HasSuffix(s, "\n") && !strings.HasSuffix(s, "\n\n")
	for _, line := range strings.Split(s, "\n") {
		safe = safe && strings.TrimRight(line, " ") == line
	}
	if safe {
		return s
	}
	return quoted(s)
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// rel is path relative to dir when the two share a top-level directory (a checkout holding
// both the tasks and the converted files), else absolute.
func rel(dir, path string) string {
	absDir, err1 := filepath.Abs(dir)
	r, err2 := filepath.Rel(absDir, path)
	if err1 != nil || err2 != nil || top(absDir) != top(path) {
		return filepath.ToSlash(path)
	}
	return filepath.ToSlash(r)
}

// top is an absolute path's first element ("/work/a/b" -> "work").
func top(p string) string {
	first, _, _ := strings.Cut(strings.TrimPrefix(filepath.ToSlash(p), "/"), "/")
	return first
}

// RewardCheck is the shell command that passes when a reward file's first number is 1 or
// more: a missing or empty file fails.
func RewardCheck(file string) string {
	return fmt.Sprintf(`awk 'NR == 1 { ok = ($1 + 0 >= 1) } END { exit !ok }' %s`, file)
}

// Format is one importable format.
type Format struct {
	// Name is how `runner import` names it ("terminal-bench").
	Name string
	// IsTask reports whether dir is a task directory of the format.
	IsTask func(dir string) bool
	// Convert reads one task directory. An error means the task cannot be run at all.
	Convert func(dir string) (Spec, error)
	// AgentContainer, when set, says why the format's tests run in the agent's container
	// (its harness runs them there, and they may check what the agent did outside the
	// workdir): the imported tasks then leave verify.fresh_container unset and carry this
	// as a note, unless Options.FreshContainer. Empty: the tests need only the workdir,
	// and every task verifies in a fresh container.
	AgentContainer string
}

// Options change how tasks are imported.
type Options struct {
	// FreshContainer sets verify.fresh_container on every task: the user knows the tests
	// need only the workdir, whatever the format's harness allows in general.
	FreshContainer bool
}

// Outcome is what became of one task directory.
type Outcome struct {
	Dir   string
	File  string // the task file written ("" when skipped)
	Notes []string
	Err   error
}

// Import converts root (one task directory, or a directory of them) into task files in
// outDir, reporting each task on w. It returns the outcomes, and an error when root holds
// no task of the format.
func Import(f Format, root, outDir string, w io.Writer) ([]Outcome, error) {
	return ImportWith(f, root, outDir, w, Options{})
}

// ImportWith is Import with options.
func ImportWith(f Format, root, outDir string, w io.Writer, opts Options) ([]Outcome, error) {
	dirs, err := taskDirs(f, root)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(outDir, 0o755); err != nil {
		return nil, fmt.Errorf("import: %w", err)
	}
	var out []Outcome
	for _, dir := range dirs {
		o := Outcome{Dir: dir}
		spec, err := f.Convert(dir)
		if err == nil {
			spec.FreshContainer = opts.FreshContainer || f.AgentContainer == ""
			if !spec.FreshContainer {
				spec.AgentContainer = f.AgentContainer
			}
			o.Notes = spec.Notes
			o.File = filepath.Join(outDir, spec.Name+".yaml")
			var data []byte
			if data, err = spec.Marshal(outDir); err == nil {
				err = os.WriteFile(o.File, data, 0o644)
			}
		}
		if err != nil {
			o.File, o.Err = "", err
		}
		out = append(out, o)
		report(w, o)
	}
	if !opts.FreshContainer && f.AgentContainer != "" {
		// Once, not per task: every task of the format verifies alike.
		_, _ = fmt.Fprintf(w, "note: verify.fresh_container is not set: %s\n", f.AgentContainer) // console note; the tasks are written
	}
	return out, nil
}

func report(w io.Writer, o Outcome) {
	bw := bufio.NewWriter(w)
	defer func() { _ = bw.Flush() }() // console output: a failed write has nowhere to be reported
	if o.Err != nil {
		fmt.Fprintf(bw, "SKIP %s: %v\n", o.Dir, o.Err)
		return
	}
	fmt.Fprintf(bw, "OK   %s -> %s\n", o.Dir, o.File)
	for _, n := range o.Notes {
		fmt.Fprintf(bw, "     unsupported: %s\n", n)
	}
}

// taskDirs is root itself when it is a task, else its subdirectories that are, sorted.
func taskDirs(f Format, root string) ([]string, error) {
	abs, err := filepath.Abs(root)
	if err != nil {
		return nil, fmt.Errorf("import %s: %w", root, err)
	}
	if fi, err := os.Stat(abs); err != nil {
		return nil, fmt.Errorf("import: %w", err)
	} else if !fi.IsDir() {
		return nil, fmt.Errorf("import: %s is not a directory", root)
	}
	if f.IsTask(abs) {
		return []string{abs}, nil
	}
	entries, err := os.ReadDir(abs)
	if err != nil {
		return nil, fmt.Errorf("import: %w", err)
	}
	var dirs []string
	for _, e := range entries {
		if p := filepath.Join(abs, e.Name()); e.IsDir() && f.IsTask(p) {
			dirs = append(dirs, p)
		}
	}
	sort.Strings(dirs)
	if len(dirs) == 0 {
		return nil, fmt.Errorf("import: %s is no %s task and holds none", root, f.Name)
	}
	return dirs, nil
}

// Exists reports whether path names an existing regular file (or a link to one).
func Exists(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.Mode().IsRegular()
}

// MaxFile caps every file an import reads: prompts, scripts and configuration are
// kilobytes, and a huge (or sparse) file must not exhaust memory.
const MaxFile = 1 << 20

// ReadFile reads the file rel (slash-separated) of the task directory dir through an
// os.Root: a symlink that leaves dir (instruction.md -> ~/.ssh/id_rsa) is refused, as is
// anything but a regular file and anything over MaxFile; the error names the file.
func ReadFile(dir, rel string) ([]byte, error) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	defer func() { _ = root.Close() }() // a directory handle: Close loses no data
	f, err := root.Open(filepath.FromSlash(rel))
	if err != nil {
		if escapes(err) {
			return nil, fmt.Errorf("%s: a symlink that leaves the task directory %s is refused", rel, dir)
		}
		return nil, err
	}
	defer func() { _ = f.Close() }() // read only: Close loses no data
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", rel, err)
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: not a regular file", rel)
	}
	if fi.Size() > MaxFile {
		return nil, fmt.Errorf("%s: %d bytes, more than the %d MiB a file of an imported task may have", rel, fi.Size(), MaxFile>>20)
	}
	data, err := io.ReadAll(io.LimitReader(f, MaxFile+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", rel, err)
	}
	if len(data) > MaxFile { // it grew while read
		return nil, fmt.Errorf("%s: more than the %d MiB a file of an imported task may have", rel, MaxFile>>20)
	}
	return data, nil
}

// escapes reports whether an os.Root refused a path because it leads outside.
func escapes(err error) bool {
	var pe *os.PathError
	return errors.As(err, &pe) && strings.Contains(pe.Err.Error(), "escapes")
}

// CheckTree refuses a directory of the task (tests/, the build context) that holds a
// symlink leading outside the task directory dir: copied into a container or an image, it
// would bring a host file along. A link that stays inside is fine.
func CheckTree(dir, rel string) error {
	top := filepath.Join(dir, filepath.FromSlash(rel))
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return err
	}
	if info, err := os.Lstat(top); err == nil && info.Mode()&os.ModeSymlink != 0 {
		return fmt.Errorf("%s: a symlink; the directory itself must be in the task directory", rel)
	}
	return filepath.WalkDir(top, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type()&os.ModeSymlink == 0 {
			return nil
		}
		r, _ := filepath.Rel(dir, p)
		target, err := filepath.EvalSymlinks(p)
		if err != nil {
			return fmt.Errorf("%s: a symlink that leads nowhere (%v): refused", filepath.ToSlash(r), err)
		}
		if inside, err := filepath.Rel(real, target); err != nil || !filepath.IsLocal(inside) {
			return fmt.Errorf("%s: a symlink to %s, which leaves the task directory: refused", filepath.ToSlash(r), target)
		}
		return nil
	})
}

// DockerfileWorkdir is the last absolute WORKDIR a Dockerfile sets ("" when none).
func DockerfileWorkdir(data []byte) string {
	workdir := ""
	for _, line := range strings.Split(string(data), "\n") {
		fields := strings.Fields(line)
		if len(fields) == 2 && strings.EqualFold(fields[0], "WORKDIR") && strings.HasPrefix(fields[1], "/") {
			workdir = filepath.Clean(fields[1])
		}
	}
	return workdir
}

// Seconds converts a float number of seconds (the formats' timeouts) to a duration.
func Seconds(s float64) time.Duration {
	return time.Duration(s * float64(time.Second)).Round(time.Second)
}

// SafeName makes a task name usable as a scenario and file name.
func SafeName(name string) string {
	return strings.Map(func(r rune) rune {
		if r == '/' || r == '\\' || r < 0x20 || r == 0x7f {
			return '_'
		}
		return r
	}, name)
}
