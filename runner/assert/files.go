package assert

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"regexp"
	"strings"

	"github.com/agentrunner/runner/runner/task"
	"github.com/agentrunner/runner/runner/workspace/door"
	"github.com/agentrunner/runner/tools"
)

// maxFileSize bounds what a file check reads: the agent may have written a huge file.
const maxFileSize = 32 << 20

// resolve confines p to the final workspace. follow=false leaves a final symlink
// unresolved, so file_absent sees a link (even a dangling one) as present.
func resolve(run *Run, p string, follow bool) (*tools.Workspace, string, error) {
	ws, err := run.workspace()
	if err != nil {
		return nil, "", fmt.Errorf("cannot check %s: %w", p, err)
	}
	var rel string
	var terr *tools.Error
	if follow {
		rel, terr = ws.Resolve(p)
	} else {
		rel, terr = ws.ResolveNoFollow(p)
	}
	if terr != nil {
		return nil, "", errors.New(terr.Message)
	}
	return ws, rel, nil
}

// readFile reads a workspace file through the door, following links that stay inside
// the workspace as a program there would; the error is a finished message.
func readFile(run *Run, p string) (string, error) {
	_, rel, err := resolve(run, p, true)
	if err != nil {
		return "", err
	}
	d, err := run.files()
	if err != nil {
		return "", fmt.Errorf("cannot check %s: %w", p, err)
	}
	f, err := d.OpenFollow(rel)
	if err != nil {
		return "", fileErr(p, err)
	}
	defer func() { _ = f.Close() }() // read only: Close loses no data
	data, err := f.ReadAll(maxFileSize)
	if err != nil {
		return "", fileErr(p, err)
	}
	return string(data), nil
}

// fileErr is the message of a failed read of p: what the agent left there when the door
// refused it (a FIFO, a device, a symlink loop, ...), else what the system said.
func fileErr(p string, err error) error {
	var de *door.Error
	switch {
	case errors.As(err, &de) && de.Kind == door.Directory:
		return fmt.Errorf("%s is a directory, not a file", p)
	case errors.As(err, &de):
		msg, _ := door.Blame(err)
		return errors.New(msg)
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("%s does not exist", p)
	}
	return fmt.Errorf("cannot read %s: %s", p, tools.FileError(err, p).Message)
}

type fileExists struct{ path string }

func newFileExists(spec any) (Checker, error) {
	p, err := specAs[string](spec)
	if err == nil {
		err = nonEmpty("path", p)
	}
	return fileExists{p}, err
}

func (c fileExists) Check(_ context.Context, run *Run) (bool, string) {
	ws, rel, err := resolve(run, c.path, true)
	if err != nil {
		return false, err.Error()
	}
	info, err := ws.Root().Stat(rel)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return false, c.path + " does not exist"
	case err != nil:
		return false, fileErr(c.path, err).Error()
	case info.IsDir():
		return true, c.path + " exists (a directory)"
	}
	return true, c.path + " exists"
}

type fileAbsent struct{ path string }

func newFileAbsent(spec any) (Checker, error) {
	p, err := specAs[string](spec)
	if err == nil {
		err = nonEmpty("path", p)
	}
	return fileAbsent{p}, err
}

func (c fileAbsent) Check(_ context.Context, run *Run) (bool, string) {
	ws, rel, err := resolve(run, c.path, false)
	if err != nil {
		return false, err.Error()
	}
	info, err := ws.Root().Lstat(rel)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return true, c.path + " is absent"
	case err != nil:
		return false, fileErr(c.path, err).Error()
	case info.IsDir():
		return false, c.path + " exists (a directory), want it absent"
	}
	return false, c.path + " exists, want it absent"
}

type fileContains struct{ task.FileContains }

func newFileContains(spec any) (Checker, error) {
	s, err := specAs[task.FileContains](spec)
	if err == nil {
		err = nonEmpty("path", s.Path)
	}
	return fileContains{s}, err
}

func (c fileContains) Check(_ context.Context, run *Run) (bool, string) {
	data, err := readFile(run, c.Path)
	if err != nil {
		return false, err.Error()
	}
	if strings.Contains(data, c.Text) {
		return true, fmt.Sprintf("%s contains %s", c.Path, quote(c.Text))
	}
	return false, fmt.Sprintf("%s does not contain %s; it holds %s", c.Path, quote(c.Text), describe(data))
}

type fileMatches struct {
	path string
	re   *regexp.Regexp
}

func newFileMatches(spec any) (Checker, error) {
	s, err := specAs[task.FileMatches](spec)
	if err != nil {
		return nil, err
	}
	if err := nonEmpty("path", s.Path); err != nil {
		return nil, err
	}
	re, err := regexp.Compile(s.Regex)
	if err != nil {
		return nil, fmt.Errorf("regex: %w", err)
	}
	return fileMatches{s.Path, re}, nil
}

func (c fileMatches) Check(_ context.Context, run *Run) (bool, string) {
	data, err := readFile(run, c.path)
	if err != nil {
		return false, err.Error()
	}
	if loc := c.re.FindStringIndex(data); loc != nil {
		return true, fmt.Sprintf("%s matches /%s/: %s", c.path, c.re, quote(data[loc[0]:loc[1]]))
	}
	return false, fmt.Sprintf("%s does not match /%s/; it holds %s", c.path, c.re, describe(data))
}

type fileEquals struct{ task.FileEquals }

func newFileEquals(spec any) (Checker, error) {
	s, err := specAs[task.FileEquals](spec)
	if err == nil {
		err = nonEmpty("path", s.Path)
	}
	return fileEquals{s}, err
}

func (c fileEquals) Check(_ context.Context, run *Run) (bool, string) {
	data, err := readFile(run, c.Path)
	if err != nil {
		return false, err.Error()
	}
	if data == c.Content {
		return true, fmt.Sprintf("%s equals the expected content (%s)", c.Path, plural(len(data), "byte"))
	}
	return false, fmt.Sprintf("%s differs from the expected content (want %s, got %d)%s",
		c.Path, plural(len(c.Content), "byte"), len(data), firstDiff(c.Content, data))
}

// describe summarises file content for a failure message.
func describe(data string) string {
	if data == "" {
		return "nothing (empty file)"
	}
	return fmt.Sprintf("%s: %s", plural(len(lines(data)), "line"), quote(data))
}

// lines splits s after each newline, keeping the newlines so that a missing final
// newline is a visible difference.
func lines(s string) []string {
	ls := strings.SplitAfter(s, "\n")
	if ls[len(ls)-1] == "" {
		ls = ls[:len(ls)-1]
	}
	return ls
}

// firstDiff shows the first line where got departs from want, with the line before it
// as context: enough to see the mistake without a full diff.
func firstDiff(want, got string) string {
	wl, gl := lines(want), lines(got)
	i := 0
	for i < len(wl) && i < len(gl) && wl[i] == gl[i] {
		i++
	}
	var b strings.Builder
	fmt.Fprintf(&b, "; first difference at line %d:", i+1)
	if i > 0 {
		fmt.Fprintf(&b, "\n    %s", quote(strings.TrimSuffix(wl[i-1], "\n")))
	}
	w, g := "(end of content)", "(end of file)"
	if i < len(wl) {
		w = wl[i]
	}
	if i < len(gl) {
		g = gl[i]
	}
	fmt.Fprintf(&b, "\n  - %s\n  + %s", showLine(w, g), showLine(g, w))
	return b.String()
}

// showLine quotes a line without its newline, unless the newline is the only
// difference from other.
func showLine(line, other string) string {
	if strings.HasPrefix(line, "(end of") {
		return line
	}
	trimmed := strings.TrimSuffix(line, "\n")
	if trimmed == strings.TrimSuffix(other, "\n") {
		return quote(line)
	}
	return quote(trimmed)
}
