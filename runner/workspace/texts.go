package workspace

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/pmezard/go-difflib/difflib"

	"github.com/agentrunner/runner/runner/result"
	"github.com/agentrunner/runner/runner/workspace/door"
)

// TextLimits bound the text snapshot taken before the agent acts and the diffs made from
// it afterwards, so a workspace the agent fills with a 10 MB file (or ten thousand) costs
// little memory and a small changes.json.
type TextLimits struct {
	// PerFile and Total bound the bytes kept of one file and of all (before and after).
	PerFile, Total int64
	// PerDiff and AllDiffs bound the diff text of one file and of all.
	PerDiff, AllDiffs int
	// MaxLines bounds the changed lines of a file given to the diff algorithm (whose cost
	// grows with their product); beyond it the change is shown as one hunk, all removed
	// then all added.
	MaxLines int
	// MaxFiles bounds the files diffed (a hundred thousand files the agent created are
	// counted, not each opened).
	MaxFiles int
}

// DefaultTextLimits: 256 KiB per file, 8 MiB in all, 64 KiB of diff per file, 1 MiB of
// diffs and 500 files in all.
var DefaultTextLimits = TextLimits{PerFile: 256 << 10, Total: 8 << 20, PerDiff: 64 << 10, AllDiffs: 1 << 20, MaxLines: 5000, MaxFiles: 500}

// Texts is the content of a workspace's text files as a Manifest found them, kept in the
// runner's memory: never in the workspace or anywhere the agent's commands can read or
// write, so the "before" of a diff is what it was.
type Texts struct {
	lim     TextLimits
	content map[string]string
	skipped map[string]string // path: why its content was not kept
	used    int64
}

// Texts reads the text files of the snapshot's regular files (in path order, until the
// total is used), through the door: no link followed, no FIFO waited on.
func (m *Manifest) Texts(ctx context.Context, dir string, lim TextLimits) (*Texts, error) {
	t := &Texts{lim: lim, content: map[string]string{}, skipped: map[string]string{}}
	d, err := door.Open(dir)
	if err != nil {
		return nil, fmt.Errorf("text snapshot: %w", err)
	}
	defer func() { _ = d.Close() }() // a directory handle: Close loses no data
	root := d.Opener()
	defer root.Close()
	paths := make([]string, 0, len(m.entries))
	for p, e := range m.entries {
		if e.mode.IsRegular() {
			paths = append(paths, p)
		}
	}
	sort.Strings(paths)
	for i, p := range paths {
		if i%256 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		if size := m.entries[p].size; size > lim.PerFile {
			t.skipped[p] = fmt.Sprintf("larger than %s", sizeText(lim.PerFile))
			continue
		} else if t.used+size > lim.Total {
			t.skipped[p] = fmt.Sprintf("not in the snapshot: its %s total was used up", sizeText(lim.Total))
			continue
		}
		s, why := t.read(root, p)
		if why != "" {
			t.skipped[p] = why
			continue
		}
		t.content[p] = s
	}
	return t, nil
}

// read reads a regular file's text within the limits; why says why not.
func (t *Texts) read(root *door.Opener, p string) (text, why string) {
	f, err := root.Open(p)
	var de *door.Error
	switch {
	case errors.As(err, &de) && de.Kind != door.Permission:
		return "", "not a regular file"
	case err != nil:
		return "", "not readable"
	}
	defer func() { _ = f.Close() }() // read only: Close loses no data
	if f.Info().Size() > t.lim.PerFile {
		return "", fmt.Sprintf("larger than %s", sizeText(t.lim.PerFile))
	}
	left := min(t.lim.PerFile, t.lim.Total-t.used)
	b, more, err := f.ReadPrefix(left)
	switch {
	case err != nil:
		return "", "not readable"
	case more && int64(len(b)) < left:
		return "", "changed while runner read it"
	case more && left == t.lim.PerFile:
		return "", fmt.Sprintf("larger than %s", sizeText(t.lim.PerFile))
	case more:
		return "", fmt.Sprintf("not in the snapshot: its %s total was used up", sizeText(t.lim.Total))
	case bytes.IndexByte(b, 0) >= 0 || !utf8.Valid(b):
		return "", "binary"
	}
	t.used += int64(len(b))
	return string(b), ""
}

// Diffs are the unified diffs of the text files Changes lists, the snapshot's content
// against dir's now. Files that are not text, too large or unreadable are listed with
// the reason. It reads dir as the snapshot did (the door: no link followed, non-blocking)
// and checks ctx between files: once ctx is done, or the diffs reach AllDiffs or
// MaxFiles, the other files are only counted (Omitted).
func (t *Texts) Diffs(ctx context.Context, dir string, c Changes) result.Diffs {
	var out result.Diffs
	d, err := door.Open(dir)
	if err != nil {
		out.Note = "workspace not readable: " + err.Error()
		return out
	}
	// A directory handle: Close loses no data.
	defer func() { _ = d.Close() }()
	root := d.Opener()
	defer root.Close()
	t.used = 0 // the after side gets a total of its own
	written := 0
	add := func(status string, paths []string) {
		for _, p := range paths {
			if strings.HasSuffix(p, "/") {
				continue // a directory
			}
			if ctx.Err() != nil || written >= t.lim.AllDiffs || len(out.Files) >= t.lim.MaxFiles {
				out.Omitted++
				continue
			}
			d := t.diff(root, status, p)
			written += len(d.Diff) + len(d.Path)
			out.Files = append(out.Files, d)
		}
	}
	add(result.DiffCreated, c.Created)
	add(result.DiffChanged, c.Changed)
	add(result.DiffDeleted, c.Deleted)
	if out.Omitted > 0 {
		why := fmt.Sprintf("the diffs reached %s or %d files", sizeText(int64(t.lim.AllDiffs)), t.lim.MaxFiles)
		if ctx.Err() != nil {
			why = "the time for diffs ran out"
		}
		out.Note = fmt.Sprintf("%d more changed file(s) not diffed: %s", out.Omitted, why)
	}
	return out
}

// diff is one file's diff.
func (t *Texts) diff(root *door.Opener, status, p string) result.FileDiff {
	d := result.FileDiff{Path: p, Status: status}
	var before, after string
	from, to := "a/"+p, "b/"+p
	if status != result.DiffCreated {
		var ok bool
		if before, ok = t.content[p]; !ok {
			d.Skipped = t.skipped[p]
			if d.Skipped == "" {
				d.Skipped = "not in the snapshot"
			}
			return d
		}
	} else {
		from = "/dev/null"
	}
	if status != result.DiffDeleted {
		var why string
		if after, why = t.read(root, p); why != "" {
			d.Skipped = why
			return d
		}
	} else {
		to = "/dev/null"
	}
	if before == after {
		d.Skipped = "same content (only its metadata changed)"
		return d
	}
	d.Diff, d.Added, d.Removed = unified(before, after, from, to, t.lim.MaxLines)
	if d.Diff == "" {
		d.Skipped = "differs only in the newline at the end"
		return d
	}
	if len(d.Diff) > t.lim.PerDiff {
		cut := t.lim.PerDiff
		for cut > 0 && !utf8.RuneStart(d.Diff[cut]) {
			cut--
		}
		d.Diff, d.Truncated = d.Diff[:cut], true
	}
	return d
}

// unified is the unified diff of two texts with 3 lines of context. The lines common to
// both ends are set aside first; a middle longer than maxLines is shown as one hunk.
func unified(before, after, from, to string, maxLines int) (diff string, added, removed int) {
	a, b := splitLines(before), splitLines(after)
	var text string
	if len(a)+len(b) > 2*maxLines && middle(a, b) > maxLines {
		text = oneHunk(a, b, from, to)
	} else {
		text, _ = difflib.GetUnifiedDiffString(difflib.UnifiedDiff{A: a, B: b, FromFile: from, ToFile: to, Context: 3})
	}
	for i, l := range strings.SplitAfter(text, "\n") {
		switch {
		case i < 2:
		case strings.HasPrefix(l, "+"):
			added++
		case strings.HasPrefix(l, "-"):
			removed++
		}
	}
	return text, added, removed
}

// splitLines splits s after each newline; a last line without one carries git's marker,
// so a change of the final newline shows.
func splitLines(s string) []string {
	if s == "" {
		return nil
	}
	lines := strings.SplitAfter(s, "\n")
	if last := len(lines) - 1; lines[last] == "" {
		lines = lines[:last]
	} else {
		lines[last] += "\n\\ No newline at end of file\n"
	}
	return lines
}

// middle is the number of lines of a and b left once their common ends are set aside.
func middle(a, b []string) int {
	p := 0
	for p < len(a) && p < len(b) && a[p] == b[p] {
		p++
	}
	s := 0
	for s < len(a)-p && s < len(b)-p && a[len(a)-1-s] == b[len(b)-1-s] {
		s++
	}
	return max(len(a), len(b)) - p - s
}

// oneHunk is a unified diff that removes all of a and adds all of b: valid, not minimal,
// and cheap whatever the inputs.
func oneHunk(a, b []string, from, to string) string {
	var s strings.Builder
	fmt.Fprintf(&s, "--- %s\n+++ %s\n@@ -%s +%s @@\n", from, to, hunkRange(len(a)), hunkRange(len(b)))
	for _, l := range a {
		s.WriteString("-" + l)
	}
	for _, l := range b {
		s.WriteString("+" + l)
	}
	return s.String()
}

func hunkRange(n int) string {
	if n == 0 {
		return "0,0"
	}
	return fmt.Sprintf("1,%d", n)
}

// sizeText is a byte limit for a note: 256 KiB, 8 MiB.
func sizeText(n int64) string {
	if n >= 1<<20 && n%(1<<20) == 0 {
		return fmt.Sprintf("%d MiB", n>>20)
	}
	if n >= 1<<10 && n%(1<<10) == 0 {
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}
