package bounded

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/lexer"
	"github.com/goccy/go-yaml/parser"
	"gotest.tools/v3/assert"
)

// allocated returns the bytes f allocates.
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// blockNest is n block mappings, each indented under the one before.
func blockNest(n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "%sk%d:\n", strings.Repeat(" ", i), i)
	}
	return b.String()
}

// TestHostileNestingIsRefusedCheaply: the 60,000 `[` (117 KB; the parser used
// 1.4 GB on it), deep `{`, deep block indentation, compact `- - -` nesting, a flood of
// values and a TOML inline-table bomb are each refused with a line, a column and (in a
// block mapping) the key, allocating almost nothing.
func TestHostileNestingIsRefusedCheaply(t *testing.T) {
	for _, tc := range []struct {
		name, data, want string
		check            func(string, []byte, Limits) error
	}{
		{"60000 [", strings.Repeat("[", 60000), "f:1:65: nested more than 64 levels deep; a task file may nest at most that deep", YAML},
		{"deep {", "a:\n  b: " + strings.Repeat("{x: ", 60000), "f:2:254: a.b: nested more than 64 levels deep", YAML},
		{"deep block", blockNest(200), "f:65:65: k0.k1.k2.k3", YAML},
		{"compact sequences", "- " + strings.Repeat("- ", 30000) + "x\n", "f:1:129: nested more than 64 levels deep", YAML},
		{"many values", "a: [" + strings.Repeat("x,", 200_000) + "]\n", "more than 100000 values", YAML},
		{"many comments", strings.Repeat("#\n", 200_000), "f:100001:1: more than 100000 values", YAML},
		{"json", `{"a": ` + strings.Repeat("[", 60000), "f:1:70: nested more than 64 levels deep", JSON},
		{"toml", "a = " + strings.Repeat("{a=", 20000), "f:1:197: nested more than 64 levels deep", TOML},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var err error
			data := []byte(tc.data)
			n := allocated(func() { err = tc.check("f", data, TaskFile) })
			assert.ErrorContains(t, err, tc.want)
			var be *Error
			assert.Assert(t, errors.As(err, &be) && be.Line > 0)
			assert.Assert(t, n < 64<<10, "the scan allocated %d bytes", n)
		})
	}
}

// TestOrdinaryInputPasses: what real files hold passes with its nesting counted right:
// brackets in quoted strings, comments, block scalars (code indented 40 levels) and plain
// text are content; JSON in YAML nests; TOML headers do not nest.
func TestOrdinaryInputPasses(t *testing.T) {
	code := "a:\n  files:\n    deep.py: |\n"
	for i := range 40 {
		code += strings.Repeat("    ", i+3) + "if x[[[[[[[[[{{{{{{{{:\n"
	}
	code += "  next: 1\n"
	for name, tc := range map[string]struct {
		data  string
		depth int
	}{
		"block scalar":   {code, 4},
		"quoted":         {`a: "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[["` + "\nb: '{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{''{{'\n", 2},
		"comment":        {"a: 1 # [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[\n# {{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{\n", 2},
		"plain brackets": {"prompt: fix a[i][j] and m{k}\n", 3},
		"flow":           {"a: {b: [1, {c: [2]}], d: \"x]\"}\n", 5},
		"json":           {`{"a": [{"b": "[{"}]}`, 3},
		"sequences":      {"- a: 1\n  b:\n    - c\n- - d\n", 4},
	} {
		t.Run(name, func(t *testing.T) {
			depth, err := scanYAML("f", []byte(tc.data), TaskFile)
			assert.NilError(t, err)
			assert.Equal(t, depth, tc.depth)
			assert.NilError(t, YAML("f", []byte(tc.data), TaskFile))
		})
	}
	// Long files of ordinary repetition: rows with empty fields, keys with compact
	// sequences, empty values, entries with anchors; none deepens with its length.
	for name, unit := range map[string]string{
		"dataset rows with nulls": "- name: x\n  value:\n  other: 1\n",
		"compact sequences":       "k%d:\n- a\n- b: 1\n",
		"null keys":               "k%d:\n",
		"null entries":            "-\n",
		"anchored entries":        "- &a%d\n  x: 1\n",
	} {
		var b strings.Builder
		for i := range 3000 {
			b.WriteString(strings.ReplaceAll(unit, "%d", fmt.Sprint(i)))
		}
		assert.NilError(t, YAML("f", []byte(b.String()), Dataset), name)
		assert.Assert(t, tokenDepth(b.String()) <= 4, name)
	}
	assert.NilError(t, TOML("f", []byte("[a.b]\nx = [1, [2]]\n[[c]]\ny = \"[[[[\" # {{{{\nz = '''\n[[[[\n'''\n"), TaskFile))
}

// TestRepositoryTaskFilesPass: every YAML file of the repository's suites and examples
// passes the task file's limits, well inside them.
func TestRepositoryTaskFilesPass(t *testing.T) {
	var files []string
	for _, dir := range []string{"../../scenarios", "../../examples", "../../tests/testdata", "../task/testdata"} {
		_ = filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
			if err == nil && !info.IsDir() && (strings.HasSuffix(p, ".yaml") || strings.HasSuffix(p, ".yml")) {
				files = append(files, p)
			}
			return nil
		})
	}
	assert.Assert(t, len(files) > 20, "found %d", len(files))
	deepest := 0
	for _, f := range files {
		data, err := ReadFile(f, TaskFile)
		assert.NilError(t, err)
		d, err := scanYAML(f, data, TaskFile)
		assert.NilError(t, err)
		deepest = max(deepest, d)
	}
	t.Logf("%d files, deepest %d", len(files), deepest)
	assert.Assert(t, deepest <= TaskFile.Depth/4, "deepest %d", deepest)
}

// TestReadFileRefusesWhatWouldFillMemory: a file over the cap is refused by its size
// before it is read (a sparse 1 GiB file), a link to /dev/zero unread.
func TestReadFileRefusesWhatWouldFillMemory(t *testing.T) {
	dir := t.TempDir()
	huge := filepath.Join(dir, "huge.yaml")
	assert.NilError(t, os.WriteFile(huge, nil, 0o644))
	assert.NilError(t, os.Truncate(huge, 1<<30))
	var err error
	n := allocated(func() { _, err = ReadFile(huge, TaskFile) })
	assert.ErrorContains(t, err, huge+": 1073741824 bytes, more than the 4 MiB a task file may have")
	assert.Assert(t, errors.Is(err, ErrTooLarge))
	assert.Assert(t, n < 64<<10, "allocated %d", n)
	zero := filepath.Join(dir, "zero.yaml")
	assert.NilError(t, os.Symlink("/dev/zero", zero))
	_, err = ReadFile(zero, TaskFile)
	assert.ErrorContains(t, err, "not a regular file (a device)")
	assert.Assert(t, errors.Is(err, ErrNotRegular))
}

// parseDepth is the deepest nesting of collections goccy/go-yaml's parser builds from
// data (0 when it does not parse).
func parseDepth(data string) int {
	d := 0
	if f, err := parser.ParseBytes([]byte(data), 0); err == nil {
		for _, doc := range f.Docs {
			d = max(d, astDepth(doc.Body))
		}
	}
	return d
}

// tokenDepth is the least depth limit the token check lets data through with.
func tokenDepth(data string) int {
	toks := lexer.Tokenize(data)
	for d := 0; ; d++ {
		if checkTokens("f", toks, Limits{Bytes: 1 << 30, Depth: d, Nodes: 1 << 30}) == nil {
			return d
		}
	}
}

func astDepth(n ast.Node) int {
	switch v := n.(type) {
	case *ast.MappingNode:
		d := 0
		for _, mv := range v.Values {
			d = max(d, astDepth(mv.Key), astDepth(mv.Value))
		}
		return d + 1
	case *ast.MappingValueNode:
		return max(astDepth(v.Key), astDepth(v.Value)) + 1
	case *ast.SequenceNode:
		d := 0
		for _, e := range v.Values {
			d = max(d, astDepth(e))
		}
		return d + 1
	case *ast.AnchorNode:
		return astDepth(v.Value)
	case *ast.TagNode:
		return astDepth(v.Value)
	case *ast.MappingKeyNode:
		return astDepth(v.Value)
	}
	return 0
}

// yamlPieces make random documents that mix every construct the checks must tell apart:
// punctuation, quotes, comments, block scalars, indentation, properties, markers and the
// same-column forms goccy/go-yaml nests without indentation.
var yamlPieces = []string{"[", "]", "{", "}", ",", ": ", ":", " ", "  ", "\n", "\n  ", "\n    ", "- ", "? ", `"`, `'`, `\`,
	"#", " #", "|", ">", "|-\n  ", "a", "key", "&x ", "!t ", "*x", "---\n", "...\n", "\t", "\r", "''", `\"`, "%YAML 1.2\n",
	"-\n", "a:\n", "- a:\n", "? a\n", ": b\n", "a:\n-\n"}

// checkParserBound fails when the parser nests data deeper than the token check counts.
func checkParserBound(t *testing.T, data string) {
	t.Helper()
	if p, c := parseDepth(data), tokenDepth(data); p > c {
		t.Fatalf("the parser nests %d deep, the check counts %d, for %q", p, c, data)
	}
}

// TestTokenCheckBoundsTheParser: for random units of YAML's constructs, alone and
// repeated 4 and 12 times (a construct that nests without indentation deepens with each
// repetition: "a:\n-\n" 10,000 times made the parser allocate 795 MB), the parser never
// nests deeper than the token check counts, so a document it lets through parses at most
// Depth deep.
func TestTokenCheckBoundsTheParser(t *testing.T) {
	rng := rand.New(rand.NewPCG(24, 4))
	n := 4000
	if testing.Short() {
		n = 400
	}
	for _, known := range []string{"a:\n-\n", "-\n  !t \n", ":a:\n-\na:\n-\n|-\n  |-\n  #", "-\n? \n    \\key\n", "a:\n[]\n", "[- - a]", "[&x :a:\n]"} {
		checkParserBound(t, strings.Repeat(known, 12))
	}
	for range n {
		var b strings.Builder
		for range 1 + rng.IntN(16) {
			b.WriteString(yamlPieces[rng.IntN(len(yamlPieces))])
		}
		for _, k := range []int{1, 4, 12} {
			checkParserBound(t, strings.Repeat(b.String(), k))
		}
	}
}

// FuzzTokenCheck is the test above as a fuzz target (go test -fuzz FuzzTokenCheck).
func FuzzTokenCheck(f *testing.F) {
	for _, s := range []string{"[[a]]", "a: 'x' [[", "a: |\n    b\n  [[[", "- - [", `{"a": "[["}`, "a:\n-\n", "-\n  !t \n"} {
		f.Add(s, uint8(4))
	}
	f.Fuzz(func(t *testing.T, unit string, k uint8) {
		if len(unit)*int(k%16+1) > 4096 {
			return
		}
		checkParserBound(t, strings.Repeat(unit, int(k%16+1)))
	})
}
