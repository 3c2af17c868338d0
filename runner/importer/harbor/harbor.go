// Package harbor converts Harbor task directories (instruction.md, task.toml,
// environment/Dockerfile, solution/solve.sh, tests/test.sh) into runner tasks.
package harbor

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/BurntSushi/toml"

	"github.com/agentrunner/runner/runner/bounded"
	"github.com/agentrunner/runner/runner/importer"
)

// Format is Harbor's task layout, for importer.Import.
var Format = importer.Format{Name: "harbor", IsTask: IsTask, Convert: Convert, AgentContainer: agentContainer}

// agentContainer is why imported tasks verify in the agent's container: Harbor's verifier
// uploads tests/ into the trial's environment, the agent's, and runs test.sh there
// (Verifier.verify: upload_dir, then exec), so tests may check what the agent did
// outside the workdir (packages it installed, services it started, files under /etc).
const agentContainer = "Harbor's verifier runs tests/test.sh in the agent's environment, and it may check what the agent did outside the workdir " +
	"(installed packages, running services, /etc); files_changed.outside records it. Import with --fresh-container when the tests need only the workdir"

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
		Network    network `toml:"network"`
	} `toml:"agent"`
	Verifier struct {
		TimeoutSec float64           `toml:"timeout_sec"`
		User       string            `toml:"user"`
		Env        map[string]string `toml:"env"`
		Network    network           `toml:"network"`
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
	Network       network           `toml:"network"`
	// BuildTimeoutSec needs nothing: runner builds without a time limit of its own.
	BuildTimeoutSec float64 `toml:"build_timeout_sec"`
}

// network is a [*.network] table: mode is "public" (or none given), "no-network" or
// "allowlist" (with the hosts it allows, which runner cannot enforce).
type network struct {
	Mode string `toml:"mode"`
}

// silentKeys are task.toml keys that need no note when runner does not use them: the
// format's version and descriptive metadata.
var silentKeys = []string{"version", "task", "metadata"}

// IsTask reports whether dir holds a task.toml.
func IsTask(dir string) bool { return importer.Exists(filepath.Join(dir, "task.toml")) }

// Convert reads one task directory.
func Convert(dir string) (importer.Spec, error) {
	var tt taskTOML
	data, err := importer.ReadFile(dir, "task.toml")
	if err != nil {
		return importer.Spec{}, err
	}
	if err := bounded.TOML("task.toml", data, bounded.Imported); err != nil {
		return importer.Spec{}, err
	}
	md, err := toml.Decode(string(data), &tt)
	if err != nil {
		return importer.Spec{}, fmt.Errorf("task.toml: %w", err)
	}
	prompt, err := importer.ReadFile(dir, "instruction.md")
	if err != nil {
		return importer.Spec{}, err
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
	// One network setting serves the agent and the tests: it is on only if nothing the
	// task declares asks for less. Never widened: what runner cannot enforce is off.
	s.Network, s.Notes = networkOf(tt, s.Notes)
	s.Notes = append(s.Notes, environment(&s, tt)...)
	if err := image(&s, dir, e.DockerImage); err != nil {
		return s, err
	}
	s.Notes = append(s.Notes, unmapped(md.Undecoded())...)
	if b, err := importer.ReadFile(dir, "solution/solve.sh"); err == nil {
		s.Solution = string(b)
	} else if _, serr := os.Lstat(filepath.Join(dir, "solution", "solve.sh")); serr == nil {
		return s, err // there, but a link out of the task, too large, not a file
	} else {
		s.Notes = append(s.Notes, "no solution/solve.sh: no reference:")
	}
	return s, tests(&s, dir)
}

// limits carries over the container's memory, and notes the limits runner does not
// enforce (the network: networkOf).
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
		b, err := importer.ReadFile(dir, "environment/Dockerfile")
		if err != nil {
			return err
		}
		s.Dockerfile = df
		if wd := importer.DockerfileWorkdir(b); s.Workdir == "" && wd != "" && wd != "/app" {
			s.Workdir = wd
		}
	} else {
		s.Image = dockerImage
	}
	for _, n := range []string{"docker-compose.yaml", "docker-compose.yml"} {
		if cf := filepath.Join(envDir, n); importer.Exists(cf) {
			svc, err := importer.Compose(dir, "environment/"+n)
			if err != nil {
				return err
			}
			s.Notes = append(s.Notes, svc.Notes...)
			for k, v := range svc.Env {
				s.Env[k] = v
			}
			if svc.NoNetwork {
				s.Network = false
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
	test, err := importer.ReadFile(dir, "tests/test.sh") // first: a missing one is named
	if err != nil {
		return fmt.Errorf("tests/test.sh: %w", err)
	}
	if err := importer.CheckTree(dir, "tests"); err != nil {
		return err
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

// networkOf maps the task's network settings to runner's one switch: the legacy
// allow_internet and network_mode, and the mode of [environment.network],
// [agent.network] and [verifier.network]. "no-network" is off; "allowlist" is off too,
// with a note, until runner has allowlists; an unknown mode is off with a note. Only a
// task that asks for nothing less keeps the network on (Harbor's default).
func networkOf(tt taskTOML, notes []string) (bool, []string) {
	on := true
	e := tt.Environment
	switch {
	case e.NetworkMode == "no-network":
		on = false
	case e.NetworkMode != "" && e.NetworkMode != "public":
		on = false
		notes = append(notes, fmt.Sprintf("network_mode %q is unknown: no network rather than a guess", e.NetworkMode))
	}
	if e.AllowInternet != nil && !*e.AllowInternet {
		on = false
	}
	for _, n := range []struct {
		table string
		mode  string
	}{{"environment.network", e.Network.Mode}, {"agent.network", tt.Agent.Network.Mode}, {"verifier.network", tt.Verifier.Network.Mode}} {
		switch n.mode {
		case "", "public":
		case "no-network":
			on = false
		case "allowlist":
			on = false
			notes = append(notes, fmt.Sprintf("[%s] mode = \"allowlist\": runner has no allowlists yet, so the task runs with no network", n.table))
		default:
			on = false
			notes = append(notes, fmt.Sprintf("[%s] mode = %q is unknown: no network rather than a guess", n.table, n.mode))
		}
	}
	return on, notes
}

// unmapped names the task.toml keys runner did not read, but for silentKeys; a table is
// named by its keys rather than itself.
func unmapped(keys []toml.Key) []string {
	names := make([]string, 0, len(keys))
	for _, k := range keys {
		if !slices.Contains(silentKeys, k[0]) {
			names = append(names, k.String())
		}
	}
	var notes []string
	for _, n := range names {
		table := false
		for _, m := range names {
			table = table || strings.HasPrefix(m, n+".")
		}
		if !table {
			notes = append(notes, fmt.Sprintf("task.toml key %s is not carried over", n))
		}
	}
	return notes
}
