// Package harbor converts Harbor task directories (instruction.md, task.toml,
// environment/Dockerfile, solution/solve.sh, tests/test.sh) into runner tasks.
package harbor

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/BurntSushi/toml"

	"github.com/agentrunner/runner/runner/importer"
)

// Format is Harbor's task layout, for importer.Import.
var Format = importer.Format{Name: "harbor", IsTask: IsTask, Convert: Convert}

// Where Harbor puts the tests and where they leave the reward.
const (
	testDir    = "/tests"
	rewardTxt  = "/logs/verifier/reward.txt"
	rewardJSON = "/logs/verifier/reward.json"
)

// taskTOML is the part of task.toml runner uses.
type taskTOML struct {
	Task struct {
		Name        string `toml:"name"`
		Description string `toml:"description"`
	} `toml:"task"`
	Metadata struct {
		AuthorName string   `toml:"author_name"`
		Difficulty string   `toml:"difficulty"`
		Category   string   `toml:"category"`
		Tags       []string `toml:"tags"`
	} `toml:"metadata"`
	Agent struct {
		TimeoutSec float64 `toml:"timeout_sec"`
		User       string  `toml:"user"`
	} `toml:"agent"`
	Verifier struct {
		TimeoutSec float64           `toml:"timeout_sec"`
		User       string            `toml:"user"`
		Env        map[string]string `toml:"env"`
	} `toml:"verifier"`
	Environment environmentTOML `toml:"environment"`
}

// environmentTOML is task.toml's [environment].
type environmentTOML struct {
	DockerImage   string            `toml:"docker_image"`
	CPUs          float64           `toml:"cpus"`
	MemoryMB      int               `toml:"memory_mb"`
	Memory        string            `toml:"memory"`
	StorageMB     int               `toml:"storage_mb"`
	GPUs          int               `toml:"gpus"`
	AllowInternet *bool             `toml:"allow_internet"`
	NetworkMode   string            `toml:"network_mode"`
	Workdir       string            `toml:"workdir"`
	Env           map[string]string `toml:"env"`
}

// IsTask reports whether dir holds a task.toml.
func IsTask(dir string) bool { return importer.Exists(filepath.Join(dir, "task.toml")) }

// Convert reads one task directory.
func Convert(dir string) (importer.Spec, error) {
	var tt taskTOML
	if _, err := toml.DecodeFile(filepath.Join(dir, "task.toml"), &tt); err != nil {
		return importer.Spec{}, fmt.Errorf("task.toml: %w", err)
	}
	prompt, err := os.ReadFile(filepath.Join(dir, "instruction.md"))
	if err != nil {
		return importer.Spec{}, fmt.Errorf("instruction.md: %w", err)
	}
	e := tt.Environment
	s := importer.Spec{
		Name: importer.SafeName(filepath.Base(dir)), Description: tt.Task.Description, Prompt: string(prompt),
		Timeout: importer.Seconds(tt.Agent.TimeoutSec), TestTimeout: importer.Seconds(tt.Verifier.TimeoutSec),
		CPUs: e.CPUs, MemoryMB: e.MemoryMB, User: tt.Agent.User, Workdir: e.Workdir, Network: true,
	}
	if s.Description == "" && tt.Task.Name != "" {
		s.Description = tt.Task.Name
	}
	if strings.TrimSpace(s.Prompt) == "" {
		return s, fmt.Errorf("instruction.md is empty")
	}
	s.Tags = append(append([]string{}, tt.Metadata.Tags...), meta("difficulty", tt.Metadata.Difficulty)...)
	s.Tags = append(s.Tags, meta("category", tt.Metadata.Category)...)
	s.Tags = append(append(s.Tags, meta("author", tt.Metadata.AuthorName)...), "source:harbor")

	s.Notes = append(s.Notes, limits(&s, e)...)
	s.Notes = append(s.Notes, environment(&s, tt)...)
	if err := image(&s, dir, e.DockerImage); err != nil {
		return s, err
	}
	if b, err := os.ReadFile(filepath.Join(dir, "solution", "solve.sh")); err == nil {
		s.Solution = string(b)
	} else {
		s.Notes = append(s.Notes, "no solution/solve.sh: no reference:")
	}
	return s, tests(&s, dir)
}

// limits carries over the container's memory and network, and notes the limits runner
// does not enforce.
func limits(s *importer.Spec, e environmentTOML) []string {
	var notes []string
	if s.MemoryMB == 0 && e.Memory != "" {
		var err error
		if s.MemoryMB, err = megabytes(e.Memory); err != nil {
			notes = append(notes, fmt.Sprintf("memory %q: %v; no memory limit", e.Memory, err))
		}
	}
	if e.StorageMB > 0 {
		notes = append(notes, fmt.Sprintf("storage_mb = %d: no disk limit", e.StorageMB))
	}
	if e.GPUs > 0 {
		notes = append(notes, fmt.Sprintf("gpus = %d: no GPUs are given to the container", e.GPUs))
	}
	switch {
	case e.NetworkMode == "no-network":
		s.Network = false
	case e.NetworkMode != "" && e.NetworkMode != "public":
		notes = append(notes, fmt.Sprintf("network_mode %q: the container gets the engine's default network", e.NetworkMode))
	case e.AllowInternet != nil:
		s.Network = *e.AllowInternet
	}
	return notes
}

// environment carries over the variables runner can give as they are, and notes the
// verifier's user and variables, which it cannot.
func environment(s *importer.Spec, tt taskTOML) []string {
	var notes []string
	if tt.Verifier.User != "" && tt.Verifier.User != tt.Agent.User {
		notes = append(notes, fmt.Sprintf("verifier user %q: the tests run as the agent's user", tt.Verifier.User))
	}
	s.Env = map[string]string{}
	for k, v := range tt.Environment.Env {
		if strings.Contains(v, "${") {
			notes = append(notes, fmt.Sprintf("environment variable %s=%s needs Harbor's substitution; left out", k, v))
			continue
		}
		s.Env[k] = v
	}
	if len(tt.Verifier.Env) > 0 {
		notes = append(notes, fmt.Sprintf("[verifier.env] (%d variables): runner has one env for the agent and the tests, and does not give the agent the verifier's; left out", len(tt.Verifier.Env)))
	}
	return notes
}

// image finds the task's Dockerfile (else its docker_image) and the variables of a
// compose file next to it.
func image(s *importer.Spec, dir, dockerImage string) error {
	envDir := filepath.Join(dir, "environment")
	if df := filepath.Join(envDir, "Dockerfile"); importer.Exists(df) {
		s.Dockerfile = df
		if wd := importer.DockerfileWorkdir(df); s.Workdir == "" && wd != "" && wd != "/app" {
			s.Workdir = wd
		}
	} else {
		s.Image = dockerImage
	}
	for _, n := range []string{"docker-compose.yaml", "docker-compose.yml"} {
		if cf := filepath.Join(envDir, n); importer.Exists(cf) {
			_, env, notes, err := importer.Compose(cf)
			if err != nil {
				return err
			}
			s.Notes = append(s.Notes, notes...)
			for k, v := range env {
				s.Env[k] = v
			}
		}
	}
	if s.Dockerfile == "" && s.Image == "" {
		return fmt.Errorf("no environment/Dockerfile and no docker_image in task.toml")
	}
	if s.Workdir == "/app" {
		s.Workdir = ""
	}
	return nil
}

// tests reads tests/test.sh: the verify files, the command, the results' format and the
// reward file.
func tests(s *importer.Spec, dir string) error {
	test, err := os.ReadFile(filepath.Join(dir, "tests", "test.sh"))
	if err != nil {
		return fmt.Errorf("tests/test.sh: %w", err)
	}
	s.VerifyCopy = filepath.Join(dir, "tests")
	s.TestCommand = "mkdir -p /logs/verifier /logs/agent && if command -v bash >/dev/null 2>&1; then bash " + testDir + "/test.sh; else sh " + testDir + "/test.sh; fi"
	script := string(test)
	if strings.Contains(script, "pytest") && strings.Contains(script, "-rA") {
		s.Format = "pytest"
	}
	if strings.Contains(script, "reward.json") && !strings.Contains(script, "reward.txt") {
		s.ScoreFile = rewardJSON
		s.Notes = append(s.Notes, "reward.json: scored, but the tests' own outcome decides pass or fail")
	} else {
		s.ScoreFile, s.RewardPasses = rewardTxt, true
	}
	return nil
}

func meta(key, value string) []string {
	if value == "" {
		return nil
	}
	return []string{key + ":" + value}
}

// megabytes reads Harbor's older memory strings: "2G", "512M", "1024" (MiB).
func megabytes(s string) (int, error) {
	s = strings.TrimSpace(strings.ToUpper(s))
	mult := 1.0
	switch {
	case strings.HasSuffix(s, "G"), strings.HasSuffix(s, "GB"):
		mult, s = 1024, strings.TrimRight(s, "GB")
	case strings.HasSuffix(s, "M"), strings.HasSuffix(s, "MB"):
		s = strings.TrimRight(s, "MB")
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || v <= 0 {
		return 0, fmt.Errorf("not a size")
	}
	return int(v * mult), nil
}
