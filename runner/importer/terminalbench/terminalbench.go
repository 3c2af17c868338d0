// Package terminalbench converts Terminal-Bench task directories (task.yaml, Dockerfile,
// docker-compose.yaml, solution.sh, run-tests.sh, tests/) into runner tasks.
package terminalbench

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/goccy/go-yaml"

	"github.com/agentrunner/runner/runner/importer"
)

// Format is Terminal-Bench's task layout, for importer.Import.
var Format = importer.Format{Name: "terminal-bench", IsTask: IsTask, Convert: Convert}

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
	data, err := os.ReadFile(filepath.Join(dir, "task.yaml"))
	if err != nil {
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
		s.Dockerfile = df
		if wd := importer.DockerfileWorkdir(df); wd != "" && wd != "/app" {
			s.Workdir = wd
		}
	}
	if cf := composeFile(dir); cf != "" {
		image, env, notes, err := importer.Compose(cf)
		if err != nil {
			return err
		}
		s.Notes = append(s.Notes, notes...)
		for k, v := range env {
			s.Env[k] = v
		}
		if s.Dockerfile == "" {
			s.Image = image
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
		b, err := os.ReadFile(filepath.Join(dir, "solution.sh"))
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
	runTests := filepath.Join(dir, "run-tests.sh")
	script, err := os.ReadFile(runTests)
	if err != nil {
		return fmt.Errorf("run-tests.sh: %w", err)
	}
	s.VerifyFiles = map[string]string{"run-tests.sh": string(script)}
	if fi, err := os.Stat(filepath.Join(dir, "tests")); err == nil && fi.IsDir() {
		s.VerifyCopy = filepath.Join(dir, "tests")
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
