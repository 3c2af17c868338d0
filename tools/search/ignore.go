package search

import (
	"bytes"
	"path"
	"strings"
)

// This file implements the subset of gitignore(5) that decides what a search skips. It is
// our own rather than gocodewalker's go-gitignore because that one matches absolute OS
// paths against files it opened itself; here every path is workspace-relative and every
// read goes through the workspace root.

// ignoreRule is one compiled line of a .gitignore file.
type ignoreRule struct {
	negate  bool     // "!pattern": re-include
	dirOnly bool     // "pattern/": matches directories only
	name    string   // unanchored pattern: matched against the last path element
	segs    []string // anchored pattern: matched element by element ("**" spans any number)
}

// ignoreFile is the rules of one .gitignore, with the directory they are relative to.
type ignoreFile struct {
	base  string // workspace-relative directory ("." for the root)
	rules []ignoreRule
}

// ignoreStack is the chain of .gitignore files in effect in a directory, deepest first.
// It is immutable, so directories read in parallel can share their parents' chain.
type ignoreStack struct {
	file   *ignoreFile
	parent *ignoreStack
}

// push returns a stack with f on top; empty files leave the stack unchanged.
func (s *ignoreStack) push(f *ignoreFile) *ignoreStack {
	if f == nil || len(f.rules) == 0 {
		return s
	}
	return &ignoreStack{file: f, parent: s}
}

// ignored reports whether rel (workspace-relative, slash-separated) is ignored. As in git,
// a deeper .gitignore overrides a shallower one and, within a file, the last match wins.
func (s *ignoreStack) ignored(rel string, isDir bool) bool {
	for ; s != nil; s = s.parent {
		sub, ok := relTo(s.file.base, rel)
		if !ok {
			continue
		}
		rules := s.file.rules
		for i := len(rules) - 1; i >= 0; i-- {
			if rules[i].match(sub, isDir) {
				return !rules[i].negate
			}
		}
	}
	return false
}

// relTo returns rel relative to base, when rel lies below base.
func relTo(base, rel string) (string, bool) {
	if base == "." {
		return rel, true
	}
	if len(rel) > len(base) && rel[len(base)] == '/' && strings.HasPrefix(rel, base) {
		return rel[len(base)+1:], true
	}
	return "", false
}

func (r *ignoreRule) match(rel string, isDir bool) bool {
	if r.dirOnly && !isDir {
		return false
	}
	if r.segs == nil {
		name := rel
		if i := strings.LastIndexByte(rel, '/'); i >= 0 {
			name = rel[i+1:]
		}
		return globSegment(r.name, name)
	}
	return matchSegments(r.segs, strings.Split(rel, "/"))
}

// matchSegments matches path elements against pattern elements, where "**" matches any
// number of elements (at least one when it ends the pattern: "dir/**" is dir's contents).
func matchSegments(pat, name []string) bool {
	for len(pat) > 0 {
		if pat[0] == "**" {
			if len(pat) == 1 {
				return len(name) > 0
			}
			for i := 0; i <= len(name); i++ {
				if matchSegments(pat[1:], name[i:]) {
					return true
				}
			}
			return false
		}
		if len(name) == 0 || !globSegment(pat[0], name[0]) {
			return false
		}
		pat, name = pat[1:], name[1:]
	}
	return len(name) == 0
}

// globSegment matches one path element against a glob element. Literal elements, the
// common case ("node_modules", "dist"), skip the glob machinery.
func globSegment(pat, name string) bool {
	if !strings.ContainsAny(pat, `*?[\`) {
		return pat == name
	}
	if strings.HasPrefix(pat, "*") && !strings.ContainsAny(pat[1:], `*?[\`) {
		return strings.HasSuffix(name, pat[1:]) // "*.log"
	}
	ok, err := path.Match(pat, name)
	return ok && err == nil
}

// parseIgnore compiles the contents of a .gitignore file found in directory base.
func parseIgnore(base string, data []byte) *ignoreFile {
	f := &ignoreFile{base: base}
	for len(data) > 0 {
		var line []byte
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			line, data = data[:i], data[i+1:]
		} else {
			line, data = data, nil
		}
		if r, ok := parseIgnoreLine(string(line)); ok {
			f.rules = append(f.rules, r)
		}
	}
	return f
}

func parseIgnoreLine(line string) (ignoreRule, bool) {
	line = strings.TrimSuffix(line, "\r")
	// Trailing spaces are dropped unless escaped with a backslash.
	for strings.HasSuffix(line, " ") && !strings.HasSuffix(line, `\ `) {
		line = line[:len(line)-1]
	}
	if line == "" || line[0] == '#' {
		return ignoreRule{}, false
	}
	var r ignoreRule
	if line[0] == '!' {
		r.negate, line = true, line[1:]
	} else if strings.HasPrefix(line, `\!`) || strings.HasPrefix(line, `\#`) {
		line = line[1:]
	}
	if strings.HasSuffix(line, "/") {
		r.dirOnly, line = true, strings.TrimRight(line, "/")
	}
	if line == "" {
		return ignoreRule{}, false
	}
	// fnmatch spells a negated class [!...]; path.Match wants [^...].
	line = strings.ReplaceAll(line, "[!", "[^")
	if !strings.Contains(line, "/") {
		if line == "**" {
			r.segs = []string{"**"}
		} else {
			r.name = line
		}
		return r, true
	}
	// A slash anywhere but at the end anchors the pattern to the .gitignore's directory.
	line = strings.TrimPrefix(line, "/")
	for _, s := range strings.Split(line, "/") {
		if s == "" {
			continue
		}
		if strings.Contains(s, "**") && s != "**" {
			s = strings.ReplaceAll(s, "**", "*") // "a**b" is an ordinary star in git
		}
		r.segs = append(r.segs, s)
	}
	if len(r.segs) == 0 {
		return ignoreRule{}, false
	}
	return r, true
}
