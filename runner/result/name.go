package result

import (
	"crypto/sha256"
	"encoding/hex"
	"regexp"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// DisplayName is the scenario's name as reports show it: with " #k" on every run of a
// repeated task, k its Repeat (runs are numbered from 1), so each run has a distinct name.
func (s Scenario) DisplayName() string {
	if s.Repeats > 1 || s.Repeat > 1 {
		return s.Name + " #" + strconv.Itoa(s.Repeat)
	}
	return s.Name
}

// maxDirName bounds the name part of a directory name, in bytes: file systems allow 255
// per path component, and a long case label should not come near that.
const maxDirName = 96

// marked matches what only DirName appends: a repeat ".rK" or a hash ".xxxxxxxx". A name
// that ends so by itself gets the hash too, so no two scenarios share a directory.
var marked = regexp.MustCompile(`\.(r[0-9]+|[0-9a-f]{8})$`)

// DirName is the scenario's output directory: its name with every character that a shell,
// a URL or an artifact upload treats specially (spaces, #, quotes, $, *, brackets...)
// replaced by "_", and ".rK" on every run of a repeated task (K as in DisplayName: from 1).
// A name that had to change gets ".xxxxxxxx", a hash of the name itself, so "a b" and "a_b"
// stay apart. The display name stays in result.json and the reports.
func (s Scenario) DirName() string {
	dir := safeName(s.Name)
	if dir != s.Name || marked.MatchString(dir) {
		sum := sha256.Sum256([]byte(s.Name))
		dir += "." + hex.EncodeToString(sum[:4])
	}
	if s.Repeats > 1 || s.Repeat > 1 {
		dir += ".r" + strconv.Itoa(s.Repeat)
	}
	return dir
}

// safeName keeps letters, digits (of any script), marks, ".", "_" and "-": nothing a shell
// expands or splits, nothing a URL must escape but the non-ASCII letters. A leading "." or
// "-" becomes "_" too (no hidden directory, "..", or word an option parser would read).
func safeName(name string) string {
	var b strings.Builder
	for i, r := range name {
		switch {
		case r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsMark(r):
		case (r == '.' || r == '-') && i > 0:
		default:
			r = '_'
		}
		if b.Len()+utf8.RuneLen(r) > maxDirName {
			break
		}
		b.WriteRune(r)
	}
	if b.Len() == 0 {
		return "_"
	}
	return b.String()
}
