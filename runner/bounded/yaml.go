package bounded

import "strings"

// scanYAML checks a YAML document (JSON included) against lim (size, depth, values)
// before even a tokenizer sees it, and returns the deepest nesting it saw. It follows
// block structure by indentation (and the compact `- - x` form), flow collections,
// quoted strings, comments and block scalars, and where the grammar leaves a doubt it
// counts the text as structure rather than skip it as content: a lenient parser may read
// brackets after a value as a flow collection, so they count. Its job is to bound the
// tokenizer's work (a token costs about 270 bytes); the tokens' own check (checkTokens)
// is exact.
func scanYAML(path string, data []byte, lim Limits) (int, error) {
	if err := CheckSize(path, data, lim); err != nil {
		return 0, err
	}
	s := &yamlScan{counter: newCounter(path, data, lim)}
	s.counter.field = s.field
	for !s.done() {
		s.blockLine()
	}
	if err := s.result(); err != nil {
		return s.deepest, err
	}
	return s.deepest, crudeTokens(path, data, lim)
}

// level is one open block node: the column it starts at and, for a mapping entry, its key.
type level struct {
	indent int
	key    string
}

type yamlScan struct {
	*counter
	stack   []level
	deepest int
}

func isBlank(b byte) bool { return b == ' ' || b == '\t' }

// isEOL reports whether offset i ends a line: a line break or the end of the data.
func (s *yamlScan) isEOL(i int) bool {
	return i >= len(s.data) || s.data[i] == '\n' || s.data[i] == '\r'
}

// blankOrEOL reports whether offset i is a blank or ends a line (what must follow an
// indicator such as `- ` or `: `).
func (s *yamlScan) blankOrEOL(i int) bool { return s.isEOL(i) || isBlank(s.data[i]) }

// lineBreak moves past the line break at c.pos (\n, \r\n or \r), if there is one.
func (s *yamlScan) lineBreak() bool {
	if s.pos >= len(s.data) {
		return false
	}
	switch s.data[s.pos] {
	case '\r':
		if s.pos+1 < len(s.data) && s.data[s.pos+1] == '\n' {
			s.pos++
		}
	case '\n':
	default:
		return false
	}
	s.newline()
	return true
}

func (s *yamlScan) skipBlanks() {
	for s.pos < len(s.data) && isBlank(s.data[s.pos]) {
		s.pos++
	}
}

// commentAt reports whether a `#` at offset i begins a comment: first on its line or
// after a blank.
func (s *yamlScan) commentAt(i int) bool {
	return s.data[i] == '#' && (i == s.lineStart || isBlank(s.data[i-1]))
}

// eolOrComment reports whether nothing but a comment is left on the line.
func (s *yamlScan) eolOrComment() bool { return s.isEOL(s.pos) || s.commentAt(s.pos) }

// finishLine skips the rest of the line (a comment) and its line break.
func (s *yamlScan) finishLine() {
	if s.pos < len(s.data) && s.commentAt(s.pos) {
		s.node(s.pos) // a parser keeps comments as tokens
	}
	for !s.isEOL(s.pos) {
		s.pos++
	}
	s.lineBreak()
}

// marker reports whether a document marker (--- or ...) starts at c.pos, at column 0.
func (s *yamlScan) marker() bool {
	if s.pos != s.lineStart || s.pos+3 > len(s.data) {
		return false
	}
	m := string(s.data[s.pos : s.pos+3])
	return (m == "---" || m == "...") && s.blankOrEOL(s.pos+3)
}

// field names where the scan is: the keys of the open block mappings.
func (s *yamlScan) field() string {
	var keys []string
	for _, l := range s.stack {
		if l.key != "" {
			keys = append(keys, l.key)
		}
	}
	return joinKeys(keys)
}

// joinKeys names a field by its keys; a deep one by its first and last few.
func joinKeys(keys []string) string {
	if len(keys) > 8 {
		keys = append(append(keys[:4:4], "…"), keys[len(keys)-3:]...)
	}
	return strings.Join(keys, ".")
}

// push opens a block node at the current column.
func (s *yamlScan) push() {
	s.stack = append(s.stack, level{indent: s.pos - s.lineStart})
	s.nest(len(s.stack))
	s.node(s.pos)
}

func (s *yamlScan) nest(d int) {
	s.deepest = max(s.deepest, d)
	s.depth(d, s.pos)
}

// blockLine scans one line in block context, from its first byte.
func (s *yamlScan) blockLine() {
	s.skipBlanks()
	if s.isEOL(s.pos) {
		s.lineBreak()
		return
	}
	indent := s.pos - s.lineStart
	switch {
	case s.data[s.pos] == '#':
		s.finishLine()
		return
	case s.marker():
		s.stack = s.stack[:0]
		s.node(s.pos)
		s.pos += 3
		s.skipBlanks()
		if s.eolOrComment() {
			s.finishLine()
			return
		}
	case indent == 0 && s.data[s.pos] == '%': // a directive
		s.node(s.pos)
		s.finishLine()
		return
	}
	for len(s.stack) > 0 && s.stack[len(s.stack)-1].indent >= indent {
		s.stack = s.stack[:len(s.stack)-1]
	}
	s.lineNodes()
}

// lineNodes scans the nodes that start on this line: indicators of compact nesting
// (`- - x`, `? x`), a key and its value, each one level deeper than the one before.
func (s *yamlScan) lineNodes() {
	for !s.done() {
		s.push()
		if s.err != nil {
			return
		}
		c := s.data[s.pos]
		if (c == '-' || c == '?' || c == ':') && s.blankOrEOL(s.pos+1) {
			s.pos++
			s.skipBlanks()
			if s.eolOrComment() {
				s.finishLine()
				return
			}
			continue
		}
		s.properties()
		if s.eolOrComment() {
			s.finishLine()
			return
		}
		key := ""
		switch c = s.data[s.pos]; c {
		case '[', '{':
			s.flow(len(s.stack) - 1) // the collection is the level just opened
		case '"', '\'':
			start := s.pos
			s.quoted(c)
			key = string(s.data[start+1 : max(start+1, s.pos-1)])
		case '|', '>':
			if s.blockHeader() {
				s.blockScalar()
				return
			}
			if _, isKey := s.plain(); !isKey {
				s.rest()
				return
			}
		default:
			var isKey bool
			if key, isKey = s.plain(); !isKey {
				s.rest()
				return
			}
		}
		if !s.keyIndicator() {
			s.rest()
			return
		}
		s.stack[len(s.stack)-1].key = key
		s.skipBlanks()
		if s.eolOrComment() {
			s.finishLine()
			return
		}
	}
}

// keyIndicator moves past a `:` that makes what came before it a key, if one follows.
func (s *yamlScan) keyIndicator() bool {
	s.skipBlanks()
	if s.pos < len(s.data) && s.data[s.pos] == ':' && s.blankOrEOL(s.pos+1) {
		s.pos++
		return true
	}
	return false
}

// properties moves past a node's anchor (&a) and tag (!t), each a value of its own.
func (s *yamlScan) properties() {
	for s.pos < len(s.data) && (s.data[s.pos] == '&' || s.data[s.pos] == '!') {
		s.node(s.pos)
		for !s.blankOrEOL(s.pos) {
			s.pos++
		}
		s.skipBlanks()
	}
}

// plain moves over a plain scalar in block context to the end of its line, a comment, or
// the `: ` that makes it a key (left at the colon), and returns it. Brackets in it count
// as nesting while it lasts: a parser that took them for a flow collection builds that.
func (s *yamlScan) plain() (string, bool) {
	start, open := s.pos, 0
	for !s.isEOL(s.pos) {
		switch c := s.data[s.pos]; {
		case c == ':' && s.blankOrEOL(s.pos+1):
			return strings.TrimSpace(string(s.data[start:s.pos])), true
		case c == '#' && isBlank(s.data[s.pos-1]):
			return "", false
		case c == '[' || c == '{':
			open++
			s.nest(len(s.stack) + open)
		case (c == ']' || c == '}') && open > 0:
			open--
		}
		s.pos++
	}
	return "", false
}

// rest scans what follows a complete node on its line, which a valid file leaves empty
// or a comment: a bracket there still opens a flow collection, a quote after a blank a
// string, so that no text a lenient parser reads as structure goes uncounted.
func (s *yamlScan) rest() {
	for !s.done() && !s.isEOL(s.pos) {
		switch c := s.data[s.pos]; {
		case s.commentAt(s.pos):
			s.finishLine()
			return
		case c == '[' || c == '{':
			s.flow(len(s.stack))
		case (c == '"' || c == '\'') && isBlank(s.data[s.pos-1]):
			s.quoted(c)
		default:
			s.pos++
		}
	}
	s.lineBreak()
}

// quoted moves past the string quoted with q at c.pos, across lines: `\` escapes in a
// double-quoted string, a doubled quote is a quote in a single-quoted one. A document marker at the
// start of a line ends it, as it ends the document.
func (s *yamlScan) quoted(q byte) {
	s.node(s.pos)
	for s.pos++; s.pos < len(s.data); {
		c := s.data[s.pos]
		switch {
		case c == '\n' || c == '\r':
			s.lineBreak()
			if s.marker() {
				return
			}
			continue
		case q == '"' && c == '\\':
			s.pos++
			if s.lineBreak() {
				continue
			}
		case c == q:
			if q == '\'' && s.pos+1 < len(s.data) && s.data[s.pos+1] == '\'' {
				s.pos++
				break
			}
			s.pos++
			return
		}
		s.pos++
	}
}

// flow moves past the flow collection opening at c.pos (to the end of the data if it is
// never closed), counting its nesting on top of base block levels.
func (s *yamlScan) flow(base int) {
	var kinds []byte // the open collections' closers, in order; a stray closer closes nothing
	atStart := true
	for !s.done() {
		c := s.data[s.pos]
		switch {
		case c == '\n' || c == '\r':
			s.lineBreak()
		case isBlank(c):
			s.pos++
		case s.commentAt(s.pos):
			for !s.isEOL(s.pos) {
				s.pos++
			}
		case c == '[' || c == '{':
			kinds = append(kinds, c+2) // ] and } follow [ and { by two
			s.node(s.pos)
			s.nest(base + len(kinds))
			s.pos++
			atStart = true
		case c == ']' || c == '}':
			s.pos++
			if len(kinds) > 0 && kinds[len(kinds)-1] == c {
				if kinds = kinds[:len(kinds)-1]; len(kinds) == 0 {
					return
				}
			}
			atStart = false
		case c == ',':
			s.node(s.pos)
			s.pos++
			atStart = true
		case (c == ':' || c == '?') && (s.blankOrEOL(s.pos+1) || atStart || isFlowIndicator(s.data[s.pos+1])):
			s.pos++
			atStart = true
		default:
			atStart = s.flowNode(c, atStart)
		}
	}
}

// flowNode moves over a node inside a flow collection starting with c: a quoted string
// (only where a node starts: a quote inside a plain scalar is text), a property (the node
// follows it), or a plain scalar; it reports whether a node still starts after it.
func (s *yamlScan) flowNode(c byte, atStart bool) bool {
	switch {
	case (c == '"' || c == '\'') && atStart:
		s.quoted(c)
		return false
	case (c == '&' || c == '!') && atStart:
		s.node(s.pos)
		for !s.blankOrEOL(s.pos) && !isFlowIndicator(s.data[s.pos]) {
			s.pos++
		}
		return true
	}
	s.node(s.pos)
	s.flowPlain()
	return false
}

func isFlowIndicator(c byte) bool { return c == ',' || c == '[' || c == ']' || c == '{' || c == '}' }

// flowPlain moves over a plain scalar inside a flow collection: up to a flow indicator,
// a `: `, a comment or the end of the line.
func (s *yamlScan) flowPlain() {
	for s.pos++; !s.isEOL(s.pos); s.pos++ {
		c := s.data[s.pos]
		if isFlowIndicator(c) || c == ':' && (s.blankOrEOL(s.pos+1) || isFlowIndicator(s.data[s.pos+1])) || s.commentAt(s.pos) {
			return
		}
	}
}

// blockHeader reports whether a block scalar's header starts at c.pos: | or > with at
// most an indentation digit and a chomping sign, then a blank or the line's end. Anything
// else a parser reads as a plain scalar, and so does the scan.
func (s *yamlScan) blockHeader() bool {
	i := s.pos + 1
	for n := 0; n < 2 && i < len(s.data) && (s.data[i] == '+' || s.data[i] == '-' || s.data[i] >= '1' && s.data[i] <= '9'); n++ {
		i++
	}
	return s.blankOrEOL(i)
}

// blockScalar moves past a literal (|) or folded (>) scalar: its header line, then every
// line that is blank or indented at least as far as its first, and further than the node
// holding it. A line indented less ends it, and is scanned as structure.
func (s *yamlScan) blockScalar() {
	parent := -1
	if len(s.stack) >= 2 {
		parent = s.stack[len(s.stack)-2].indent
	}
	s.node(s.pos)
	for !s.isEOL(s.pos) {
		s.pos++
	}
	s.lineBreak()
	content := -1
	for s.pos < len(s.data) {
		i := s.pos
		for i < len(s.data) && s.data[i] == ' ' {
			i++
		}
		n := i - s.pos
		if s.isEOL(i) {
			s.pos = i
			s.lineBreak()
			continue
		}
		if content < 0 {
			content = n
		}
		// Content at column 0 (a scalar at the top of the document) is scanned as
		// structure: a parser may not take it for content.
		if n <= max(parent, 0) || n < content || s.marker() {
			return
		}
		s.pos = i
		for !s.isEOL(s.pos) {
			s.pos++
		}
		s.lineBreak()
	}
}

// crudeTokens bounds the tokens any reading of data can make, whatever a scan takes for a
// string, comment or block scalar: a token begins at punctuation or after a blank, so
// their count bounds the tokens, and with them the tokenizer's memory (about 270 bytes
// each), at four times the values lim allows.
func crudeTokens(path string, data []byte, lim Limits) error {
	if _, at := crudeCount(data, 4*lim.Nodes); at >= 0 {
		c := newCounter(path, data, lim)
		for c.pos = 0; c.pos < at; c.pos++ {
			if data[c.pos] == '\n' {
				c.line, c.lineStart = c.line+1, c.pos+1
			}
		}
		c.failAt(at, "more than %d tokens' worth of punctuation and words; %s may hold at most that many", 4*lim.Nodes, lim.What)
		return c.err
	}
	return nil
}

// crudeCount counts the places a token may begin (punctuation, a word after a blank, the
// first byte), and where the count passed max (-1: it did not).
func crudeCount(data []byte, max int) (n, at int) {
	if len(data) > 0 {
		n = 1
	}
	for i, b := range data {
		switch b {
		case '[', ']', '{', '}', ',', ':', '?', '-', '#', '&', '*', '!', '|', '>', '\'', '"', '%', '@', '`', '.':
			n += 2 // the punctuation and what follows it
		case ' ', '\t', '\n', '\r':
			if i+1 < len(data) && !isBlankOrBreak(data[i+1]) {
				n++
			}
		default:
			continue
		}
		if n > max {
			return n, i
		}
	}
	return n, -1
}

func isBlankOrBreak(b byte) bool { return b == ' ' || b == '\t' || b == '\n' || b == '\r' }
