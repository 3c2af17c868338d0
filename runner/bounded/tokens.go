package bounded

import (
	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/lexer"
	"github.com/goccy/go-yaml/parser"
	"github.com/goccy/go-yaml/token"
)

// ParseYAML parses a YAML document bounded by lim: the scan first (no allocation: the
// size, and the values and nesting as the grammar gives them), then goccy/go-yaml's
// tokens, whose nesting and number are checked exactly as its parser will see them,
// then the parser on those tokens (one tokenization, as parser.ParseBytes does). A
// refusal is an *Error; a syntax error is the parser's, as ParseBytes returns it.
func ParseYAML(path string, data []byte, lim Limits) (*ast.File, error) {
	toks, err := yamlTokens(path, data, lim)
	if err != nil {
		return nil, err
	}
	return parser.Parse(toks, 0)
}

// YAML checks a YAML document (JSON included) against lim, as ParseYAML does, for a
// caller that decodes it some other way (yaml.Unmarshal).
func YAML(path string, data []byte, lim Limits) error {
	_, err := yamlTokens(path, data, lim)
	return err
}

func yamlTokens(path string, data []byte, lim Limits) (token.Tokens, error) {
	if _, err := scanYAML(path, data, lim); err != nil {
		return nil, err
	}
	toks := lexer.Tokenize(string(data))
	if err := checkTokens(path, toks, lim); err != nil {
		return nil, err
	}
	return toks, nil
}

// checkTokens counts the tokens and follows their nesting: flow collections (a closer
// closes only the collection of its kind, so a stray one hides no depth) on top of block
// levels, which open where a line's first token starts further right than the levels
// before, where a token follows an indicator (- ? :) on its line, or where the parser
// nests a line at the same column as the one before (see nestsAtSameColumn).
func checkTokens(path string, toks token.Tokens, lim Limits) *Error {
	w := &tokenWalk{path: path, toks: toks, lim: lim, prevType: token.UnknownType, lineFirst: token.UnknownType, lastScalarCol: -1}
	for i, tk := range toks {
		if err := w.step(i, tk); err != nil {
			return err
		}
	}
	return nil
}

// blockLevel is an open block node.
type blockLevel struct {
	col  int
	kind levelKind
	key  string
	// sticky: opened by an explicit key (?), after which the parser nests lines at any
	// column; no valid task file has one, so it is never closed by a column.
	sticky bool
}

// flowLevel is an open flow collection. An entry indicator inside one (`[- - a]`) nests
// once more in goccy/go-yaml's parser, for the rest of the collection; a pair in a
// sequence (`[a: b]`) is a mapping one level deeper, up to the next comma.
type flowLevel struct {
	typ         token.Type
	extra, pair int
}

// tokenWalk is checkTokens' state between tokens.
type tokenWalk struct {
	path string
	toks token.Tokens
	lim  Limits

	blocks              []blockLevel
	flow                []flowLevel
	flowDepth, flowBase int
	prevLine            int
	prevType, lineFirst token.Type
	afterIndicator      bool
	openProperty        bool // the last token was a property (an anchor, its name, a tag)
	lastScalar          string
	lastScalarCol       int
}

func (w *tokenWalk) step(i int, tk *token.Token) *Error {
	if tk.Position == nil {
		return nil
	}
	if i >= w.lim.Nodes {
		return w.fail(tk, "more than %d values; %s may hold at most that many", w.lim.Nodes, w.lim.What)
	}
	switch {
	case tk.Type == token.CommentType:
		return nil
	case tk.Type == token.DocumentHeaderType || tk.Type == token.DocumentEndType:
		w.blocks, w.flow, w.flowDepth = w.blocks[:0], w.flow[:0], 0
		return nil
	case tk.Type == token.StringType && i > 0 && (w.toks[i-1].Type == token.LiteralType || w.toks[i-1].Type == token.FoldedType):
		return nil // a block scalar's content is part of the scalar, wherever the tokenizer puts it
	}
	property := tk.Type == token.AnchorType || tk.Type == token.TagType || i > 0 && w.toks[i-1].Type == token.AnchorType
	pushed := false
	if len(w.flow) == 0 {
		pushed = w.block(i, tk, property)
		if tk.Type == token.MappingKeyType {
			w.blocks = append(w.blocks, blockLevel{col: tk.Position.Column, sticky: true})
		}
	}
	w.flowToken(tk, pushed)
	depth := len(w.blocks)
	if len(w.flow) > 0 {
		depth = w.flowBase + w.flowDepth
	}
	if depth > w.lim.Depth {
		return w.fail(tk, "nested more than %d levels deep; %s may nest at most that deep", w.lim.Depth, w.lim.What)
	}
	if tk.Type == token.StringType || tk.Type == token.DoubleQuoteType || tk.Type == token.SingleQuoteType {
		w.lastScalar, w.lastScalarCol = tk.Value, tk.Position.Column
	}
	w.prevLine = tk.Position.Line
	// A node's properties are not the node: what follows them counts as following what
	// came before them.
	if !property {
		w.prevType = tk.Type
		w.afterIndicator = tk.Type == token.SequenceEntryType || tk.Type == token.MappingKeyType || tk.Type == token.MappingValueType
	}
	w.openProperty = property
	return nil
}

// block follows the block levels for a token outside flow collections and reports
// whether it opened one.
func (w *tokenWalk) block(i int, tk *token.Token, property bool) bool {
	col, newLine := tk.Position.Column, tk.Position.Line != w.prevLine
	key := startsKey(w.toks, i)
	kind := kindOf(tk.Type, key)
	switch {
	case property && !newLine:
		return false // a property opens no level; its node, after it, does
	case newLine && w.openProperty:
		// A node's properties alone on a line: the parser takes the next token for their
		// node, whatever its column.
	case newLine:
		w.closeBefore(col, kind, !nestsAtSameColumn(w.lineFirst, w.prevType, tk.Type, key))
	case w.afterIndicator || tk.Type == token.SequenceEntryType || tk.Type == token.MappingKeyType:
		// After an indicator on its line; an indicator after a value is no valid YAML, but
		// the parser may still nest what follows it.
	default:
		return false
	}
	w.blocks = append(w.blocks, blockLevel{col: col, kind: kind})
	if newLine {
		w.lineFirst = tk.Type
	}
	return true
}

// closeBefore closes the levels a line starting at col leaves: those further right, and,
// for a sibling, the levels of another kind at its column (a key ends a sequence standing
// at its key's column) and the one of its kind, whose place it takes.
func (w *tokenWalk) closeBefore(col int, kind levelKind, sibling bool) {
	open := func(l blockLevel) bool { return !l.sticky && l.col == col }
	for n := len(w.blocks); n > 0 && !w.blocks[n-1].sticky && w.blocks[n-1].col > col; n-- {
		w.blocks = w.blocks[:n-1]
	}
	if n := len(w.blocks); n == 0 || !open(w.blocks[n-1]) || !sibling {
		return
	}
	for n := len(w.blocks); kind != otherLevel && n > 1 && open(w.blocks[n-1]) && w.blocks[n-1].kind != kind && open(w.blocks[n-2]); n-- {
		w.blocks = w.blocks[:n-1]
	}
	w.blocks = w.blocks[:len(w.blocks)-1]
}

// flowToken follows the flow collections; pushed says the token opened a block level.
func (w *tokenWalk) flowToken(tk *token.Token, pushed bool) {
	n := len(w.flow)
	switch tk.Type {
	case token.SequenceStartType, token.MappingStartType:
		if n == 0 {
			w.flowBase = len(w.blocks)
			if pushed {
				w.flowBase-- // the collection is the block node this token opened
			}
		}
		w.flow = append(w.flow, flowLevel{typ: tk.Type})
		w.flowDepth++
	case token.SequenceEndType, token.MappingEndType:
		want := token.SequenceStartType
		if tk.Type == token.MappingEndType {
			want = token.MappingStartType
		}
		if n > 0 && w.flow[n-1].typ == want {
			w.flowDepth -= 1 + w.flow[n-1].extra + w.flow[n-1].pair
			w.flow = w.flow[:n-1]
		}
	case token.CollectEntryType:
		if n > 0 {
			w.flowDepth -= w.flow[n-1].pair
			w.flow[n-1].pair = 0
		}
	case token.SequenceEntryType, token.MappingKeyType:
		if n > 0 {
			w.flow[n-1].extra++
			w.flowDepth++
		}
	case token.MappingValueType:
		if n == 0 && len(w.blocks) > 0 && w.blocks[len(w.blocks)-1].col == w.lastScalarCol {
			w.blocks[len(w.blocks)-1].key = w.lastScalar
		}
		if n > 0 && w.flow[n-1].typ == token.SequenceStartType && w.flow[n-1].pair == 0 {
			w.flow[n-1].pair = 1
			w.flowDepth++
		}
	}
}

// fail is a refusal at tk, under the keys of the open block mappings.
func (w *tokenWalk) fail(tk *token.Token, format string, args ...any) *Error {
	c := &counter{path: w.path, lim: w.lim, line: tk.Position.Line}
	c.field = func() string {
		var keys []string
		for _, b := range w.blocks {
			if b.key != "" {
				keys = append(keys, b.key)
			}
		}
		return joinKeys(keys)
	}
	c.failAt(tk.Position.Column-1, format, args...)
	return c.err
}

// nestsAtSameColumn reports whether a line starting with a token of type next (key: it
// is followed by `:` on its line), at the column of the line before (which began with
// first and ended with last), is nested in it rather than its sibling. A sequence may
// stand at its key's column (`a:` then `- x`), and goccy/go-yaml takes any other value
// there for the key's too (`a:` then `[]`); it reads a line after a bare `-` as that
// entry's content, and one after an explicit key (`? a`) as its value. Each costs no
// indentation, so "a:\n-\n" repeated nests two levels per five bytes: 48 KB of it made
// the parser allocate 795 MB.
func nestsAtSameColumn(first, last, next token.Type, key bool) bool {
	switch {
	case last == token.MappingValueType && (next == token.SequenceEntryType || !key),
		last == token.SequenceEntryType && next != token.SequenceEntryType,
		last == token.MappingKeyType,
		first == token.MappingKeyType && next != token.MappingKeyType:
		return true
	}
	return false
}

// startsKey reports whether toks[i] is a key: a `:` follows it (and its properties) on
// its line.
func startsKey(toks token.Tokens, i int) bool {
	line := toks[i].Position.Line
	for j := i + 1; j < len(toks) && toks[j].Position != nil && toks[j].Position.Line == line; j++ {
		switch toks[j].Type {
		case token.MappingValueType:
			return true
		case token.AnchorType, token.TagType:
			continue
		}
		if toks[j-1].Type != token.AnchorType {
			return false
		}
	}
	return false
}

// levelKind is what a block level holds, so that a sibling closes the right ones.
type levelKind int

const (
	otherLevel levelKind = iota
	sequenceLevel
	mappingLevel
)

func kindOf(t token.Type, key bool) levelKind {
	switch {
	case t == token.SequenceEntryType:
		return sequenceLevel
	case key:
		return mappingLevel
	}
	return otherLevel
}
