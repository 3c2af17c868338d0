package tests

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"gotest.tools/v3/assert"
	"gotest.tools/v3/golden"
)

// The golden files hold the console output and the JSON report of the oracle run of
// testdata/suite (one task passes, one fails two assertions), with what varies from run
// to run replaced. Update them with: go test ./tests -run TestGolden -update
func TestGolden(t *testing.T) {
	t.Parallel()
	out := filepath.Join(t.TempDir(), "out")
	jsonFile, junit := filepath.Join(out, "report.json"), filepath.Join(out, "junit.xml")
	// -j 1: the console prints scenarios as they finish, so one at a time keeps the order.
	o := runner(t, run{Args: []string{"run", "--sandbox", "none", "-j", "1", "--out", out,
		"--json", jsonFile, "--junit", junit, "testdata/suite/"}})
	assert.Equal(t, o.Code, 1)

	t.Run("console", func(t *testing.T) {
		console := strings.ReplaceAll(o.Stdout, out, "OUT")
		console = durations.ReplaceAllString(console, "T")
		golden.Assert(t, console, "console.golden")
	})
	t.Run("json report", func(t *testing.T) {
		b, err := os.ReadFile(jsonFile)
		assert.NilError(t, err)
		var doc map[string]any
		assert.NilError(t, json.Unmarshal(b, &doc))
		checkVarying(t, doc, out)
		// Replace in the text, not the decoded map, so the golden keeps the field order.
		got := strings.ReplaceAll(string(b), out, "OUT")
		got = startedField.ReplaceAllString(got, `"started": "TIME"`)
		got = durationField.ReplaceAllString(got, `"$1": 1`)
		got = versionField.ReplaceAllString(got, `"runner_version": "VERSION"`)
		golden.Assert(t, got, "report.golden.json")
	})
	t.Run("junit validates", func(t *testing.T) { validateJUnit(t, junit) })
}

// durations matches the console's durations: 0.0s, 12.3s, 1m42s.
var durations = regexp.MustCompile(`\b\d+m\d+s\b|\b\d+\.\d+s\b|\b\d+ms\b`)

var (
	startedField  = regexp.MustCompile(`"started": "[^"]*"`)
	durationField = regexp.MustCompile(`"(\w+_ms)": [0-9.]+`)
	versionField  = regexp.MustCompile(`"runner_version": "[^"]*"`)
)

// checkVarying checks the fields of a JSON report that vary from run to run (times,
// durations, paths) before the golden comparison replaces them.
func checkVarying(t *testing.T, v any, out string) {
	t.Helper()
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			switch {
			case k == "started":
				s, _ := x.(string)
				_, err := time.Parse(time.RFC3339Nano, s)
				assert.NilError(t, err, "started %v", x)
			case strings.HasSuffix(k, "_ms"):
				n, ok := x.(float64)
				assert.Assert(t, ok && n >= 0, "%s: %v", k, x)
				if k != "tool_time_ms" && k != "model_time_ms" {
					assert.Assert(t, n > 0, "%s: %v", k, x)
				}
			case k == "transcript":
				s, _ := x.(string)
				assert.Assert(t, strings.HasPrefix(s, out), "transcript %q outside %s", s, out)
				_, err := os.Stat(s)
				assert.NilError(t, err)
			default:
				checkVarying(t, x, out)
			}
		}
	case []any:
		for _, x := range v {
			checkVarying(t, x, out)
		}
	}
}
