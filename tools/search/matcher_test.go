package search

import (
	"fmt"
	"math/rand/v2"
	"regexp"
	"regexp/syntax"
	"strings"
	"testing"
	"unicode/utf8"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
)

// naiveFind is the reference: split into lines and test each one on its own.
func naiveFind(buf string, match func(line string) bool) []int {
	var got []int
	if buf == "" {
		return nil
	}
	for i, line := range strings.Split(strings.TrimSuffix(buf, "\n"), "\n") {
		if match(strings.TrimSuffix(line, "\r")) {
			got = append(got, i+1)
		}
	}
	return got
}

func lineNumbers(ms []lineMatch) []int {
	var out []int
	for _, m := range ms {
		out = append(out, m.line)
	}
	return out
}

func randText(r *rand.Rand, alphabet string, n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = alphabet[r.IntN(len(alphabet))]
	}
	return string(b)
}

// TestMatcherAgainstReference compares the candidate-and-verify search with matching every
// line on its own, over random text, for literals and regexps, in both case modes, with
// both literal searches.
func TestMatcherAgainstReference(t *testing.T) {
	eachLiteralSearch(t, testMatcherAgainstReference)
}

// eachLiteralSearch runs test with the pair search (where there is one) and without.
func eachLiteralSearch(t *testing.T, test func(t *testing.T)) {
	has := usePairSearch
	t.Cleanup(func() { usePairSearch = has })
	for _, pair := range []bool{true, false} {
		if pair && !has {
			continue
		}
		usePairSearch = pair
		t.Run(fmt.Sprintf("pair=%v", pair), test)
	}
}

func testMatcherAgainstReference(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	const text = "abcAB C\n\n\r-"
	regexps := []string{
		`ab`, `a.b`, `^ab`, `b$`, `a\s*b`, `[ab]+c`, `a|B`, `x*`, `^$`, `\bab\b`, `(ab)+c`,
		`[ab]c?`, `\s`, `b\s+a`, `c$`, `^\s*-`, `A{2,}`, `(?:ab|ba)C`, `.`, `a(b|c)a`,
	}
	for round := range 300 {
		buf := randText(r, text, r.IntN(200))
		for _, fold := range []bool{false, true} {
			lit := randText(r, "abcAB -", 1+r.IntN(5))
			m, err := newMatcher(lit, false, !fold)
			assert.NilError(t, err)
			want := naiveFind(buf, func(line string) bool {
				if fold {
					return strings.Contains(strings.ToLower(line), strings.ToLower(lit))
				}
				return strings.Contains(line, lit)
			})
			assert.Check(t, is.DeepEqual(lineNumbers(m.find([]byte(buf), 1000, nil)), want), "literal %q fold %v on %q", lit, fold, buf)

			expr := regexps[round%len(regexps)]
			m, err = newMatcher(expr, true, !fold)
			assert.NilError(t, err)
			prefix := ""
			if fold {
				prefix = "(?i)"
			}
			re := regexp.MustCompile(prefix + expr)
			want = naiveFind(buf, re.MatchString)
			assert.Check(t, is.DeepEqual(lineNumbers(m.find([]byte(buf), 1000, nil)), want), "regexp %q fold %v on %q", expr, fold, buf)
		}
	}
}

func TestMatcherLimitAndColumns(t *testing.T) {
	m, err := newMatcher("NEEDLE", false, false)
	assert.NilError(t, err)
	buf := []byte("x needle\nno\nyy NeEdLe needle\nneedle")
	got := m.find(buf, 2, nil)
	assert.DeepEqual(t, lineNumbers(got), []int{1, 3}) // one entry per line, at most 2
	assert.Equal(t, got[0].col, 2)
	assert.Equal(t, got[1].col, 3)
	assert.Equal(t, string(got[1].text), "yy NeEdLe needle")
	assert.DeepEqual(t, lineNumbers(m.find(buf, 10, nil)), []int{1, 3, 4})
}

func TestLiteralRareByte(t *testing.T) {
	// The scan byte is the pattern's rarest, in both cases.
	l := newLiteral("the Zebra", true)
	assert.Equal(t, l.pat[l.rare], byte('z'))
	assert.Equal(t, l.up, byte('Z'))
	// Bytes without case are scanned once.
	l = newLiteral("a#b", true)
	assert.Equal(t, l.pat[l.rare], byte('#'))
	assert.Equal(t, l.lo, l.up)
	// A common case of the rare byte does not hide later hits of the other case.
	eachLiteralSearch(t, func(t *testing.T) {
		buf := []byte(strings.Repeat("z", 100) + "xZEBRAx" + strings.Repeat("zebr", 50) + "zebra")
		var st litState
		l := newLiteral("zebra", true)
		assert.Equal(t, l.index(buf, 0, &st), 101)
		assert.Equal(t, l.index(buf, 102, &st), len(buf)-5)
		assert.Equal(t, l.index(buf, len(buf)-4, &st), -1)
	})
}

func TestRequiredLiteral(t *testing.T) {
	for _, tc := range []struct {
		expr, want string
	}{
		{`func \w+Handler`, "Handler"},
		{`func\s+main`, "func"},
		{`(foo)+bar`, "foo"},
		{`x{2}yz`, "yz"},
		{`a|b`, ""},
		{`(abc)?d`, "d"},
		{`\d+`, ""},
	} {
		re, err := syntax.Parse(tc.expr, syntax.Perl)
		assert.NilError(t, err)
		got, _ := requiredLiteral(re.Simplify())
		assert.Equal(t, got, tc.want, tc.expr)
	}
}

func TestClipLine(t *testing.T) {
	assert.Equal(t, clipLine([]byte("short"), 0), "short")
	long := []byte(strings.Repeat("é", 400)) // 800 bytes
	got := clipLine(long, 400)
	assert.Assert(t, utf8.ValidString(got))
	assert.Assert(t, strings.HasPrefix(got, "…é") && strings.HasSuffix(got, "é…"), got)
	assert.Assert(t, len(got) <= maxLineBytes+2*len("…"))
	// At the start, no leading ellipsis.
	got = clipLine([]byte(strings.Repeat("a", 1000)), 0)
	assert.Equal(t, got, strings.Repeat("a", maxLineBytes)+"…")
	// At the end, no trailing one.
	got = clipLine([]byte(strings.Repeat("a", 1000)), 999)
	assert.Equal(t, got, "…"+strings.Repeat("a", maxLineBytes))
}
