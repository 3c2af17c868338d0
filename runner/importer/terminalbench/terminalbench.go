// Package terminalbench converts Terminal-Bench task directories (task.yaml, Dockerfile,
// docker-compose.yaml, solution.sh, run-tests.sh, tests/) into runner tasks.
package terminalbench

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/goccy/go-yaml"

	"github.com/agentrunner/runner/runner/bounded"
	"github.com/agentrunner/runner/runner/importer"
)

// Format is Terminal-Bench's task layout, for importer.Import.
var Format = importer.Format{Name: "terminal-bench", IsTask: IsTask, Convert: Convert, AgentContainer: agentContainer}

// agentContainer is why imported tasks verify in the agent's container: Terminal-Bench's
// harness copies the tests into it and runs them there (copy_to_container, then
// run-tests.sh), and many tests check what the agent did outside the workdir (packages
// it installed, services it started, files under /etc).
const agentContainer = "Terminal-Bench runs the tests in the agent's container, and they may check what the agent did outside the workdir " +
	"(installed packages, running services, /etc); files_changed.outside records it. Import with --fresh-container when the tests need only the workdir"

// testDir is where Terminal-Bench copies run-tests.sh and tests/ ($TEST_DIR).
const testDir = "/tests"

// taskFile is the part of task.yaml runner uses.
type taskFile struct {
	Instruction  string `yaml:"instruction"`
	Descriptions []struct {
		Key         string `yaml:"key"`
		Description string `yaml:"description"`
	} `yaml:"descriptions"` // the older form of instruction
	AuthorName          string   `yaml:"author_name"`
	AuthorEmail         string   `yaml:"author_email"`
	Difficulty          string   `yaml:"difficulty"`
	Category            string   `yaml:"category"`
	Tags                []string `yaml:"tags"`
	ParserName          string   `yaml:"parser_name"`
	MaxAgentTimeoutSec  float64  `yaml:"max_agent_timeout_sec"`
	MaxTestTimeoutSec   float64  `yaml:"max_test_timeout_sec"`
	RunTestsInSameShell bool     `yaml:"run_tests_in_same_shell"`
}

// IsTask reports whether dir holds a task.yaml.
func IsTask(dir string) bool { return importer.Exists(filepath.Join(dir, "task.yaml")) }

// Convert reads one task directory.
func Convert(dir string) (importer.Spec, error) {
	data, err := importer.ReadFile(dir, "task.yaml")
	if err != nil {
		return importer.Spec{}, err
	}
	if err := bounded.YAML("task.yaml", data, bounded.Imported); err != nil {
		return importer.Spec{}, err
	}
	var tf taskFile
	if err := yaml.Unmarshal(data, &tf); err != nil {
		return importer.Spec{}, fmt.Errorf("task.yaml: %w", err)
	}
	s := importer.Spec{
		Name: importer.SafeName(filepath.Base(dir)), Prompt: tf.Instruction, Network: true,
		Timeout: importer.Seconds(tf.MaxAgentTimeoutSec), TestTimeout: importer.Seconds(tf.MaxTestTimeoutSec),
		Env: map[string]string{"TEST_DIR": testDir},
	}
	if s.Prompt == "" {
		for _, d := range tf.Descriptions {
			if d.Key == "base" || s.Prompt == "" {
				s.Prompt = d.Description
			}
		}
		if len(tf.Descriptions) > 1 {
			s.Notes = append(s.Notes, fmt.Sprintf("%d descriptions: only the base one is the prompt", len(tf.Descriptions)))
		}
	}
	if strings.TrimSpace(s.Prompt) == "" {
		return s, fmt.Errorf("task.yaml has no instruction")
	}
	s.Tags = tags(tf)
	if tf.RunTestsInSameShell {
		s.Notes = append(s.Notes, "run_tests_in_same_shell: the tests run in a fresh shell of the same container")
	}

	if err := image(&s, dir); err != nil {
		return s, err
	}
	if err := solution(&s, dir); err != nil {
		return s, err
	}
	return s, tests(&s, dir, tf.ParserName)
}

// image finds the task's Dockerfile, else the image of its compose file, and the compose
// file's variables.
func image(s *importer.Spec, dir string) error {
	if df := filepath.Join(dir, "Dockerfile"); importer.Exists(df) {
		b, err := importer.ReadFile(dir, "Dockerfile")
		if err != nil {
			return err
		}
		s.Dockerfile = df
		if wd := importer.DockerfileWorkdir(b); wd != "" && wd != "/app" {
			s.Workdir = wd
		}
	}
	if cf := composeFile(dir); cf != "" {
		svc, err := importer.Compose(dir, filepath.Base(cf))
		if err != nil {
			return err
		}
		s.Notes = append(s.Notes, svc.Notes...)
		for k, v := range svc.Env {
			s.Env[k] = v
		}
		if s.Dockerfile == "" {
			s.Image = svc.Image
		}
		if svc.NoNetwork {
			s.Network = false
		}
	}
	if s.Dockerfile == "" && s.Image == "" {
		return fmt.Errorf("no Dockerfile and no image in docker-compose.yaml")
	}
	return nil
}

// solution reads solution.sh, the reference the oracle plays.
func solution(s *importer.Spec, dir string) error {
	switch {
	case importer.Exists(filepath.Join(dir, "solution.sh")):
		b, err := importer.ReadFile(dir, "solution.sh")
		if err != nil {
			return err
		}
		s.Solution = string(b)
	case importer.Exists(filepath.Join(dir, "solution.yaml")):
		s.Notes = append(s.Notes, "keystroke solution (solution.yaml): no reference:, so the oracle cannot play this task")
	default:
		s.Notes = append(s.Notes, "no solution.sh: no reference:")
	}
	return nil
}

// tests reads run-tests.sh and the tests directory: the verify files, the command and the
// results' format.
func tests(s *importer.Spec, dir, parser string) error {
	// The harness copies run-tests.sh, then the contents of tests/, into /tests (one tar,
	// in that order: terminal_bench's copy_to_container), so tests/run-tests.sh, when there
	// is one, replaces the top-level script; /tests/run-tests.sh is what it runs.
	hasTests := false
	if fi, err := os.Lstat(filepath.Join(dir, "tests")); err == nil && (fi.IsDir() || fi.Mode()&os.ModeSymlink != 0) {
		if err := importer.CheckTree(dir, "tests"); err != nil {
			return err
		}
		hasTests = true
		s.VerifyCopy = filepath.Join(dir, "tests")
	}
	inTests := hasTests && importer.Exists(filepath.Join(dir, "tests", "run-tests.sh"))
	script, err := importer.ReadFile(dir, "run-tests.sh")
	switch {
	case inTests:
		if _, err := importer.ReadFile(dir, "tests/run-tests.sh"); err != nil {
			return err
		}
		if importer.Exists(filepath.Join(dir, "run-tests.sh")) {
			s.Notes = append(s.Notes, "run-tests.sh and tests/run-tests.sh both exist: tests/run-tests.sh is the one run, as in Terminal-Bench's harness (it copies tests/ into /tests after run-tests.sh)")
		}
	case err != nil:
		return fmt.Errorf("run-tests.sh: %w", err)
	default:
		s.VerifyFiles = map[string]string{"run-tests.sh": string(script)}
	}
	s.TestCommand = "if command -v bash >/dev/null 2>&1; then bash " + testDir + "/run-tests.sh; else sh " + testDir + "/run-tests.sh; fi"
	switch parser {
	case "", "pytest":
		s.Format = "pytest"
	default:
		s.Notes = append(s.Notes, fmt.Sprintf("parser %q: the tests' exit code decides, without per-test results", parser))
	}
	return nil
}

func composeFile(dir string) string {
	for _, n := range []string{"docker-compose.yaml", "docker-compose.yml", "compose.yaml"} {
		if p := filepath.Join(dir, n); importer.Exists(p) {
			return p
		}
	}
	return ""
}

// tags keeps the metadata: the task's tags, then difficulty, category and author.
func tags(tf taskFile) []string {
	out := append([]string{}, tf.Tags...)
	if tf.Difficulty != "" {
		out = append(out, "difficulty:"+tf.Difficulty)
	}
	if tf.Category != "" {
		out = append(out, "category:"+tf.Category)
	}
	if tf.AuthorName != "" {
		out = append(out, "author:"+tf.AuthorName)
	}
	return append(out, "source:terminal-bench")
}
