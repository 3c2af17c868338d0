package harbor

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/agentrunner/runner/runner/importer/internal/importtest"
)

// task writes a Harbor task directory: files by path, relative to it.
func task(t *testing.T, files map[string]string) string {
	t.Helper()
	return importtest.Dir(t, "my-task", files)
}

// base is a complete task; each case changes a file or two.
func base() map[string]string {
	return map[string]string{
		"task.toml": `[task]
name = "fallback name"
[metadata]
author_name = "Ann"
difficulty = "hard"
category = "sys"
tags = ["x"]
[agent]
timeout_sec = 90
user = "agent"
[verifier]
timeout_sec = 30
[environment]
cpus = 2
memory_mb = 512
`,
		"instruction.md":         "Do the thing.",
		"environment/Dockerfile": "FROM alpine\nWORKDIR /work\n",
		"solution/solve.sh":      "echo done\n",
		"tests/test.sh":          "pytest /tests/test_x.py -rA\necho 1 > /logs/verifier/reward.txt\n",
	}
}

func with(files map[string]string, kv ...string) map[string]string {
	return importtest.With(files, kv...)
}

func TestConvertACompleteTask(t *testing.T) {
	dir := task(t, base())
	assert.Assert(t, IsTask(dir))
	s, err := Convert(dir)
	assert.NilError(t, err)
	assert.Equal(t, s.Name, "my-task")
	assert.Equal(t, s.Description, "fallback name")
	assert.Equal(t, s.Prompt, "Do the thing.")
	assert.Equal(t, s.Timeout, 90*time.Second)
	assert.Equal(t, s.TestTimeout, 30*time.Second)
	assert.Equal(t, s.CPUs, 2.0)
	assert.Equal(t, s.MemoryMB, 512)
	assert.Equal(t, s.User, "agent")
	assert.Equal(t, s.Workdir, "/work")
	assert.Equal(t, s.Dockerfile, filepath.Join(dir, "environment", "Dockerfile"))
	assert.DeepEqual(t, s.Tags, []string{"x", "difficulty:hard", "category:sys", "author:Ann", "source:harbor"})
	assert.Equal(t, s.Solution, "echo done\n")
	assert.Equal(t, s.Format, "pytest")
	assert.Equal(t, s.ScoreFile, rewardTxt)
	assert.Assert(t, s.RewardPasses)
	assert.Assert(t, s.Network)
	assert.Equal(t, s.VerifyCopy, filepath.Join(dir, "tests"))
	assert.Assert(t, strings.Contains(s.TestCommand, "bash /tests/test.sh"))
	assert.Equal(t, len(s.Notes), 0, "%v", s.Notes)
}

// What runner cannot give a task is said in a note; the rest is kept.
func TestConvertNotesWhatItCannotKeep(t *testing.T) {
	files := with(base(), "task.toml", `[agent]
user = "agent"
[verifier]
user = "root"
[verifier.env]
SECRET = "x"
[environment]
docker_image = "ubuntu:24.04"
memory = "2G"
storage_mb = 100
gpus = 1
network_mode = "bridge"
workdir = "/app"
[environment.env]
PLAIN = "1"
SUBST = "${HOME}/x"
`, "environment/Dockerfile", "", "solution/solve.sh", "",
		"tests/test.sh", "python3 check.py > /logs/verifier/reward.json\n",
		"environment/docker-compose.yaml", "services:\n  main:\n    build: .\n    environment:\n      FROM_COMPOSE: \"yes\"\n    ports: [\"80:80\"]\n")
	s, err := Convert(task(t, files))
	assert.NilError(t, err)
	assert.Equal(t, s.Image, "ubuntu:24.04")
	assert.Equal(t, s.Dockerfile, "")
	assert.Equal(t, s.MemoryMB, 2048)
	assert.Equal(t, s.Workdir, "") // /app is the default
	assert.DeepEqual(t, s.Env, map[string]string{"PLAIN": "1", "FROM_COMPOSE": "yes"})
	assert.Equal(t, s.ScoreFile, rewardJSON)
	assert.Assert(t, !s.RewardPasses)
	assert.Equal(t, s.Format, "")
	assert.Assert(t, !s.Network, "a network mode runner does not know never widens the network")
	notes := strings.Join(s.Notes, "\n")
	for _, want := range []string{"storage_mb = 100", "gpus = 1", `network_mode "bridge"`, `verifier user "root"`,
		"SUBST=${HOME}/x needs Harbor's substitution", "[verifier.env] (1 variables)", `compose key "ports"`,
		"no solution/solve.sh", "reward.json: scored"} {
		assert.Check(t, is.Contains(notes, want))
	}
}

func TestConvertNetwork(t *testing.T) {
	for toml, want := range map[string]bool{
		"[environment]\nnetwork_mode = \"no-network\"\n": false,
		"[environment]\nnetwork_mode = \"public\"\n":     true,
		"[environment]\nallow_internet = false\n":        false,
		"[environment]\nallow_internet = true\n":         true,
		"":                                               true,
	} {
		s, err := Convert(task(t, with(base(), "task.toml", toml+"\n")))
		assert.NilError(t, err, toml)
		assert.Equal(t, s.Network, want, toml)
	}
}

// A task that cannot run says which file is wrong.
func TestConvertErrors(t *testing.T) {
	for want, files := range map[string]map[string]string{
		"task.toml: ":                   with(base(), "task.toml", "[task\n"),
		"instruction.md: ":              with(base(), "instruction.md", ""),
		"instruction.md is empty":       with(base(), "instruction.md", " \n"),
		"no environment/Dockerfile and": with(base(), "environment/Dockerfile", ""),
		"tests/test.sh: ":               with(base(), "tests/test.sh", ""),
		"compose services a, b":         with(base(), "environment/docker-compose.yml", "services:\n  a: {}\n  b: {}\n"),
		// 60 KB that took BurntSushi/toml 56 s and 18 GB; refused before it parses.
		"task.toml:2:197: nested more than 64 levels deep":                              with(base(), "task.toml", "[metadata]\na = "+strings.Repeat("{a=", 20000)),
		"compose: environment/docker-compose.yml:1:65: nested more than 64 levels deep": with(base(), "environment/docker-compose.yml", strings.Repeat("[", 60000)),
	} {
		_, err := Convert(task(t, files))
		assert.ErrorContains(t, err, want)
	}
}

func TestMemoryStrings(t *testing.T) {
	for in, want := range map[string]int{"2G": 2048, "1.5gb": 1536, "512M": 512, "256MB": 256, "1024": 1024} {
		got, err := megabytes(in)
		assert.NilError(t, err, in)
		assert.Equal(t, got, want, in)
	}
	for _, in := range []string{"lots", "-1G", "0"} {
		_, err := megabytes(in)
		assert.ErrorContains(t, err, "not a size", in)
	}
	s, err := Convert(task(t, with(base(), "task.toml", "[environment]\nmemory = \"lots\"\n")))
	assert.NilError(t, err)
	assert.Equal(t, s.MemoryMB, 0)
	assert.Check(t, is.Contains(strings.Join(s.Notes, "\n"), `memory "lots": not a size; no memory limit`))
}
