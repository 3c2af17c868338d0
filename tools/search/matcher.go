package search

import (
	"bytes"
	"fmt"
	"regexp"
	"regexp/syntax"
	"slices"
	"unicode/utf8"
)

// matcher finds the lines of a file that match a grep pattern. Matching is per line, as in
// grep. A cheap finder locates candidates (a literal, or a literal the regexp requires), and
// only the line around a candidate is checked against the regexp, so the file is never
// split into lines and the regexp never runs over text that cannot match.
type matcher struct {
	lit *literal       // candidate finder; nil means the regexp scans the whole buffer
	re  *regexp.Regexp // nil: every literal hit is a match
	// whole is set when the regexp, scanning a buffer, anchors to its start or end (\A,
	// \z, or ^ and $ under (?-m)): without a candidate finder to bring it down to one line,
	// it must see the file in one piece, or a chunk's edges would be taken for the file's.
	whole bool
}

// lineMatch is one matching line.
type lineMatch struct {
	line int    // 1-based
	text []byte // the line, without its newline; aliases the file buffer until copied
	col  int    // byte offset of the match in text (to centre long lines)
}

// newMatcher compiles a grep pattern. Regular expressions use Go's RE2 syntax, so matching
// time is linear in the input whatever the pattern.
func newMatcher(pattern string, isRegex, caseSensitive bool) (*matcher, error) {
	if !isRegex {
		if caseSensitive || isASCII(pattern) {
			return &matcher{lit: newLiteral(pattern, !caseSensitive)}, nil
		}
		// Unicode case folding is the regexp engine's job.
		pattern = regexp.QuoteMeta(pattern)
	}
	expr := "(?m)" + pattern
	if !caseSensitive {
		expr = "(?i)" + expr
	}
	// The flags in expr make this the tree regexp.Compile builds.
	tree, err := syntax.Parse(expr, syntax.Perl)
	if err != nil {
		return nil, fmt.Errorf("%w", err)
	}
	re, err := regexp.Compile(expr)
	if err != nil {
		return nil, fmt.Errorf("%w", err)
	}
	m := &matcher{re: re}
	tree = tree.Simplify()
	if lit, fold := requiredLiteral(tree); lit != "" && (!fold || isASCII(lit)) {
		m.lit = newLiteral(lit, fold)
	}
	m.whole = m.lit == nil && anchorsText(tree)
	return m, nil
}

// anchorsText reports whether re holds an assertion about the start or end of the text.
func anchorsText(re *syntax.Regexp) bool {
	if re.Op == syntax.OpBeginText || re.Op == syntax.OpEndText {
		return true
	}
	return slices.ContainsFunc(re.Sub, anchorsText)
}

// find appends to out the matching lines of buf, at most limit of them.
func (m *matcher) find(buf []byte, limit int, out []lineMatch) []lineMatch {
	if m.lit == nil && bytes.IndexByte(buf, '\r') >= 0 {
		// In (?m) mode $ does not match before "\r\n": scanning the whole buffer would
		// miss lines, so CRLF text is matched line by line.
		return m.findLines(buf, limit, out)
	}
	var st litState
	line, counted := 1, 0 // line is the number of the line holding offset counted
	from := 0
	for from < len(buf) && len(out) < limit {
		var pos, end int
		if m.lit != nil {
			pos = m.lit.index(buf, from, &st)
			if pos < 0 {
				break
			}
			end = pos + len(m.lit.pat)
		} else {
			loc := m.re.FindIndex(buf[from:])
			if loc == nil {
				break
			}
			pos, end = from+loc[0], from+loc[1]
			if pos == len(buf) && buf[pos-1] == '\n' {
				break // an empty match after the final newline: there is no line there
			}
		}
		start := bytes.LastIndexByte(buf[from:pos], '\n') + 1 + from
		stop := len(buf)
		if i := bytes.IndexByte(buf[pos:], '\n'); i >= 0 {
			stop = pos + i
		}
		text := bytes.TrimSuffix(buf[start:stop], []byte{'\r'})
		col := pos - start
		ok := true
		if m.re != nil && (m.lit != nil || end > stop) {
			// A literal hit, or a regexp match that spans lines, only proposes this line.
			loc := m.re.FindIndex(text)
			ok = loc != nil
			if ok {
				col = loc[0]
			}
		}
		if ok {
			line += bytes.Count(buf[counted:start], []byte{'\n'})
			counted = start
			out = append(out, lineMatch{line: line, text: text, col: min(col, len(text))})
		}
		from = stop + 1
	}
	return out
}

// findLines is find without a candidate finder: every line goes through the regexp.
func (m *matcher) findLines(buf []byte, limit int, out []lineMatch) []lineMatch {
	for line := 1; len(buf) > 0 && len(out) < limit; line++ {
		text := buf
		if i := bytes.IndexByte(buf, '\n'); i >= 0 {
			text, buf = buf[:i], buf[i+1:]
		} else {
			buf = nil
		}
		text = bytes.TrimSuffix(text, []byte{'\r'})
		if loc := m.re.FindIndex(text); loc != nil {
			out = append(out, lineMatch{line: line, text: text, col: loc[0]})
		}
	}
	return out
}

// requiredLiteral returns the longest literal that every match of re contains, and
// whether it is case-folded.
func requiredLiteral(re *syntax.Regexp) (string, bool) {
	switch re.Op {
	case syntax.OpLiteral:
		return string(re.Rune), re.Flags&syntax.FoldCase != 0
	case syntax.OpCapture, syntax.OpPlus:
		return requiredLiteral(re.Sub[0])
	case syntax.OpRepeat:
		if re.Min >= 1 {
			return requiredLiteral(re.Sub[0])
		}
	case syntax.OpConcat:
		best, fold := "", false
		for _, sub := range re.Sub {
			if s, f := requiredLiteral(sub); len(s) > len(best) {
				best, fold = s, f
			}
		}
		return best, fold
	}
	return "", false
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}
