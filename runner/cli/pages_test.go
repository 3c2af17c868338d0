package cli

import (
	"html"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"gotest.tools/v3/assert"

	"github.com/agentrunner/runner/runner/merge"
	"github.com/agentrunner/runner/runner/result"
)

var (
	tagRE     = regexp.MustCompile(`<[^>]*>`)
	numberRE  = regexp.MustCompile(`\d+(?:\.\d+)?(?:ms|s)?`)
	rowRE     = regexp.MustCompile(`(?s)<tr class="[a-z]+" data-status=.*?</tr>`)
	cellRE    = regexp.MustCompile(`(?s)<td[^>]*>(.*?)</td>`)
	metaRE    = regexp.MustCompile(`(?s)<p class="meta">(.*?)</p>`)
	countsRE  = regexp.MustCompile(`(?s)<p class="counts">(.*?)</p>`)
	durationR = regexp.MustCompile(`^(\d+)m(\d\d)s$`)
)

// text is an HTML fragment's text.
func text(fragment string) string { return html.UnescapeString(tagRE.ReplaceAllString(fragment, " ")) }

// numbers are the numbers of s in order ("12.3s", "850ms", "3").
func numbers(s string) []string { return numberRE.FindAllString(s, -1) }

// pageDuration reads a duration as the pages print it back (850ms, 12.3s, 2m05s) and
// the precision it was printed with.
func pageDuration(t *testing.T, s string) (d, precision time.Duration) {
	t.Helper()
	if m := durationR.FindStringSubmatch(s); m != nil {
		mins, _ := strconv.Atoi(m[1])
		secs, _ := strconv.Atoi(m[2])
		return time.Duration(mins)*time.Minute + time.Duration(secs)*time.Second, time.Second
	}
	if v, ok := strings.CutSuffix(s, "ms"); ok {
		n, err := strconv.Atoi(v)
		assert.NilError(t, err, s)
		return time.Duration(n) * time.Millisecond, time.Millisecond
	}
	v, ok := strings.CutSuffix(s, "s")
	assert.Assert(t, ok, "not a duration: %q", s)
	f, err := strconv.ParseFloat(v, 64)
	assert.NilError(t, err, s)
	return time.Duration(f * float64(time.Second)), 100 * time.Millisecond
}

// checkDuration: the page's s is m, to the precision it was printed with.
func checkDuration(t *testing.T, what, s string, m result.Millis) {
	t.Helper()
	got, prec := pageDuration(t, s)
	want := m.Duration()
	if want <= 0 {
		assert.Equal(t, s, "0s", what)
		return
	}
	diff := got - want
	if diff < 0 {
		diff = -diff
	}
	assert.Assert(t, diff <= prec/2+time.Microsecond, "%s: the page says %s, result.json %s", what, s, want)
}

// TestPagesShowTheResultsNumbers renders the index and every scenario page of real runs
// (the oracle, once and three times over) and checks every number on them against the
// scenario's result.json: the repeat and its count, steps, tool calls, each time and
// the tokens (the pages once said "repeat 2 of 1").
func TestPagesShowTheResultsNumbers(t *testing.T) {
	dir := t.TempDir()
	pass := writeTask(t, dir, "hello.yaml", passingTask)
	fail := writeTask(t, dir, "wrong.yaml", failingTask)
	for _, repeat := range []int{1, 3} {
		t.Run("repeat "+strconv.Itoa(repeat), func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out")
			code, _, stderr := invoke(t, runArgs(out, "--repeat", strconv.Itoa(repeat), pass, fail)...)
			assert.Equal(t, code, ExitFailed, stderr)
			results, err := merge.LoadDir(out, merge.Options{})
			assert.NilError(t, err)
			assert.Equal(t, len(results), 2*repeat)
			byName := map[string]result.Scenario{}
			for _, r := range results {
				byName[r.DisplayName()] = r
			}

			index, err := os.ReadFile(filepath.Join(out, "index.html"))
			assert.NilError(t, err)
			counts := countsRE.FindStringSubmatch(string(index))
			assert.Assert(t, counts != nil)
			assert.DeepEqual(t, numbers(text(counts[1])), []string{strconv.Itoa(repeat), "0", strconv.Itoa(repeat), strconv.Itoa(2 * repeat)})
			rows := rowRE.FindAllString(string(index), -1)
			assert.Equal(t, len(rows), 2*repeat)
			for _, row := range rows {
				cells := cellRE.FindAllStringSubmatch(row, -1)
				assert.Equal(t, len(cells), 8, row)
				name := strings.TrimSpace(text(cells[1][1]))
				r, ok := byName[name]
				assert.Assert(t, ok, "row %q is no result of this run", name)
				repeatCell := strings.TrimSpace(text(cells[3][1]))
				if repeat == 1 {
					assert.Equal(t, repeatCell, "", name)
				} else {
					assert.Equal(t, repeatCell, strconv.Itoa(r.Repeat), name)
					assert.Assert(t, strings.HasSuffix(name, " #"+strconv.Itoa(r.Repeat)), name)
				}
				assert.Equal(t, strings.TrimSpace(text(cells[4][1])), strconv.Itoa(r.Steps), name)
				checkDuration(t, name+": time", strings.TrimSpace(text(cells[5][1])), r.Duration)
				assert.Equal(t, strings.TrimSpace(text(cells[6][1])), strconv.Itoa(r.Usage.PromptTokens+r.Usage.CompletionTokens), name)
				checkPage(t, out, r)
			}
		})
	}
}

// checkPage reads r's page and checks every number of its two summary lines.
func checkPage(t *testing.T, out string, r result.Scenario) {
	t.Helper()
	page, err := os.ReadFile(filepath.Join(out, r.DirName(), "index.html"))
	assert.NilError(t, err)
	metas := metaRE.FindAllStringSubmatch(string(page), -1)
	assert.Assert(t, len(metas) >= 2)
	// The file's path is the test's temporary directory: its digits are not the page's.
	headText := strings.Replace(text(metas[0][1]), r.File, "FILE", 1)
	if r.Line > 0 {
		assert.Assert(t, strings.Contains(headText, "FILE:"+strconv.Itoa(r.Line)+" "), headText)
		headText = strings.Replace(headText, "FILE:"+strconv.Itoa(r.Line), "FILE", 1)
	}
	head := numbers(headText)
	if r.Repeats > 1 {
		assert.DeepEqual(t, head, []string{strconv.Itoa(r.Repeat), strconv.Itoa(r.Repeats)})
		assert.Assert(t, strings.Contains(headText, "repeat "+strconv.Itoa(r.Repeat)+" of "+strconv.Itoa(r.Repeats)), headText)
	} else {
		assert.Equal(t, len(head), 0, "a single run shows no repeat: %s", headText)
	}
	line := text(metas[1][1])
	if r.Cost != nil {
		var cost string
		line, cost, _ = strings.Cut(line, " cost ")
		assert.Equal(t, strings.TrimSpace(cost), result.FormatUSD(r.Cost.USD)+" (prices of "+r.Cost.Prices+")")
	}
	nums := numbers(line)
	// steps, tool calls, the duration and its parts, prompt and completion tokens.
	parts := r.TimeParts()
	assert.Equal(t, len(nums), 2+1+len(parts)+2, line)
	assert.Equal(t, nums[0], strconv.Itoa(r.Steps), line)
	assert.Equal(t, nums[1], strconv.Itoa(r.ToolCalls), line)
	checkDuration(t, "duration", nums[2], r.Duration)
	var sum time.Duration
	for i, p := range parts {
		checkDuration(t, p.Name, nums[3+i], p.Time)
		assert.Assert(t, strings.Contains(line, p.Name+" "+nums[3+i]), line)
		sum += p.Time.Duration()
	}
	assert.Assert(t, sum <= r.Duration.Duration() && r.Duration.Duration()-sum < 50*time.Millisecond,
		"the parts (%s) add up to the whole (%s)", sum, r.Duration)
	assert.Equal(t, nums[len(nums)-2], strconv.Itoa(r.Usage.PromptTokens), line)
	assert.Equal(t, nums[len(nums)-1], strconv.Itoa(r.Usage.CompletionTokens), line)
	assert.Assert(t, r.SetupTime > 0 && r.VerifyTime > 0, "a real run times its setup and verification")
}
