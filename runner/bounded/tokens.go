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
	type blockLevel struct {
		col  int
		kind levelKind
		key  string
		// sticky: opened by an explicit key (?), after which the parser nests lines at
		// any column; no valid task file has one, so it is never closed by a column.
		sticky bool
	}
	var blocks []blockLevel
	// flow holds the open flow collections. An entry indicator inside one (`[- - a]`)
	// nests once more in goccy/go-yaml's parser, for the rest of the collection; a pair
	// in a sequence (`[a: b]`) is a mapping one level deeper, up to the next comma.
	type flowLevel struct {
		typ         token.Type
		extra, pair int
	}
	var flow []flowLevel
	flowDepth := 0
	flowBase, prevLine, afterIndicator := 0, 0, false
	prevType, lineFirst := token.UnknownType, token.UnknownType
	openProperty := false // the last token was a property (an anchor, its name, a tag)
	lastScalar, lastScalarCol := "", -1
	fail := func(tk *token.Token, format string, args ...any) *Error {
		c := &counter{path: path, lim: lim}
		c.line, c.lineStart = tk.Position.Line, 0
		c.field = func() string {
			var keys []string
			for _, b := range blocks {
				if b.key != "" {
					keys = append(keys, b.key)
				}
			}
			return joinKeys(keys)
		}
		c.failAt(tk.Position.Column-1, format, args...)
		return c.err
	}
	for i, tk := range toks {
		if tk.Position == nil {
			continue
		}
		if i >= lim.Nodes {
			return fail(tk, "more than %d values; %s may hold at most that many", lim.Nodes, lim.What)
		}
		switch tk.Type {
		case token.CommentType:
			continue
		case token.DocumentHeaderType, token.DocumentEndType:
			blocks, flow, flowDepth = blocks[:0], flow[:0], 0
			continue
		}
		// A block scalar's content is part of the scalar, wherever the tokenizer puts it.
		if tk.Type == token.StringType && i > 0 && (toks[i-1].Type == token.LiteralType || toks[i-1].Type == token.FoldedType) {
			continue
		}
		pushed := false
		if len(flow) == 0 {
			col := tk.Position.Column
			key := startsKey(toks, i)
			kind := kindOf(tk.Type, key)
			isProperty := tk.Type == token.AnchorType || tk.Type == token.TagType || i > 0 && toks[i-1].Type == token.AnchorType
			open := func(l blockLevel) bool { return !l.sticky && l.col == col }
			switch {
			case isProperty && tk.Position.Line == prevLine:
				kind = -1 // a property opens no level; its node, after it, does
			case tk.Position.Line != prevLine && openProperty:
				// A node's properties alone on a line: the parser takes the next token for
				// their node, whatever its column.
			case tk.Position.Line != prevLine:
				for len(blocks) > 0 && !blocks[len(blocks)-1].sticky && blocks[len(blocks)-1].col > col {
					blocks = blocks[:len(blocks)-1]
				}
				if n := len(blocks); n > 0 && open(blocks[n-1]) && !nestsAtSameColumn(lineFirst, prevType, tk.Type, key) {
					// A sibling: it ends the levels of another kind at its column (a key
					// ends a sequence standing at its key's column), then takes the place
					// of the one of its kind.
					for kind != otherLevel && len(blocks) > 1 && open(blocks[len(blocks)-1]) && blocks[len(blocks)-1].kind != kind && open(blocks[len(blocks)-2]) {
						blocks = blocks[:len(blocks)-1]
					}
					blocks = blocks[:len(blocks)-1]
				}
			case afterIndicator || tk.Type == token.SequenceEntryType || tk.Type == token.MappingKeyType:
				// After an indicator on its line; an indicator after a value is no valid
				// YAML, but the parser may still nest what follows it.
			default:
				kind = -1
			}
			if kind >= 0 {
				blocks, pushed = append(blocks, blockLevel{col: col, kind: kind}), true
				if tk.Position.Line != prevLine {
					lineFirst = tk.Type
				}
			}
		}
		if tk.Type == token.MappingKeyType && len(flow) == 0 {
			blocks = append(blocks, blockLevel{col: tk.Position.Column, sticky: true})
		}
		switch tk.Type {
		case token.SequenceStartType, token.MappingStartType:
			if len(flow) == 0 {
				flowBase = len(blocks)
				if pushed {
					flowBase-- // the collection is the block node this token opened
				}
			}
			flow = append(flow, flowLevel{typ: tk.Type})
			flowDepth++
		case token.SequenceEndType, token.MappingEndType:
			want := token.SequenceStartType
			if tk.Type == token.MappingEndType {
				want = token.MappingStartType
			}
			if len(flow) > 0 && flow[len(flow)-1].typ == want {
				top := flow[len(flow)-1]
				flowDepth -= 1 + top.extra + top.pair
				flow = flow[:len(flow)-1]
			}
		case token.CollectEntryType:
			if len(flow) > 0 {
				flowDepth -= flow[len(flow)-1].pair
				flow[len(flow)-1].pair = 0
			}
		case token.SequenceEntryType, token.MappingKeyType:
			if len(flow) > 0 {
				flow[len(flow)-1].extra++
				flowDepth++
			}
		case token.MappingValueType:
			if len(flow) == 0 && len(blocks) > 0 && blocks[len(blocks)-1].col == lastScalarCol {
				blocks[len(blocks)-1].key = lastScalar
			}
			if n := len(flow); n > 0 && flow[n-1].typ == token.SequenceStartType && flow[n-1].pair == 0 {
				flow[n-1].pair = 1
				flowDepth++
			}
		}
		depth := len(blocks)
		if len(flow) > 0 {
			depth = flowBase + flowDepth
		}
		if depth > lim.Depth {
			return fail(tk, "nested more than %d levels deep; %s may nest at most that deep", lim.Depth, lim.What)
		}
		if tk.Type == token.StringType || tk.Type == token.DoubleQuoteType || tk.Type == token.SingleQuoteType {
			lastScalar, lastScalarCol = tk.Value, tk.Position.Column
		}
		prevLine = tk.Position.Line
		// A node's properties (an anchor and its name, a tag) are not the node: what
		// follows them counts as following what came before them.
		property := tk.Type == token.AnchorType || tk.Type == token.TagType || i > 0 && toks[i-1].Type == token.AnchorType
		if !property {
			prevType = tk.Type
			afterIndicator = tk.Type == token.SequenceEntryType || tk.Type == token.MappingKeyType || tk.Type == token.MappingValueType
		}
		openProperty = property
	}
	return nil
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
