package importer_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"gotest.tools/v3/assert"

	"github.com/agentrunner/runner/runner/importer"
	"github.com/agentrunner/runner/runner/importer/harbor"
	"github.com/agentrunner/runner/runner/importer/terminalbench"
	"github.com/agentrunner/runner/runner/task"
	"github.com/agentrunner/runner/tools/catalog"
)

const fixtures = "../../tests/testdata/import"

// load parses an imported task file strictly, with the real tool catalog, as `runner run` does.
func load(t *testing.T, path string) *task.Task {
	t.Helper()
	reg := catalog.New(catalog.Options{})
	tk, err := task.Load(path, task.LoadOptions{KnownTool: reg.Canonical, ToolNames: reg.Names(), CheckArgs: reg.CheckArgs})
	assert.NilError(t, err)
	return tk
}

func importOne(t *testing.T, f importer.Format, dir string) (*task.Task, importer.Outcome, string) {
	t.Helper()
	out := t.TempDir()
	var log bytes.Buffer
	outcomes, err := importer.Import(f, dir, out, &log)
	assert.NilError(t, err)
	assert.Equal(t, len(outcomes), 1)
	assert.NilError(t, outcomes[0].Err)
	return load(t, outcomes[0].File), outcomes[0], log.String()
}

func TestTerminalBench(t *testing.T) {
	src, _ := filepath.Abs(filepath.Join(fixtures, "terminal-bench/tb-hello"))
	tk, o, _ := importOne(t, terminalbench.Format, filepath.Dir(src))
	assert.Equal(t, tk.Name, "tb-hello")
	assert.Assert(t, strings.HasPrefix(tk.Prompt, "Create a file called hello.txt in /app."))
	assert.DeepEqual(t, tk.Tags, []string{"file-operations", "difficulty:easy", "category:file-operations", "author:runner fixtures", "source:terminal-bench"})
	assert.Equal(t, tk.Timeout, 2*time.Minute)
	assert.Equal(t, tk.DockerfilePath(), filepath.Join(src, "Dockerfile"))
	assert.Equal(t, tk.Environment.Workdir, "/app")
	assert.Equal(t, tk.Environment.VerifyDir, "/tests")
	assert.Equal(t, tk.Env["TEST_DIR"], "/tests")
	verify := tk.Verify.Copy
	if !filepath.IsAbs(verify) {
		verify = filepath.Join(tk.Dir, verify)
	}
	assert.Equal(t, verify, filepath.Join(src, "tests"))
	assert.Assert(t, strings.Contains(tk.Verify.Files["run-tests.sh"], "pytest $TEST_DIR/test_outputs.py -rA"))
	c := tk.Assert[0].Spec.(task.CommandCheck)
	assert.Equal(t, c.Format, "pytest")
	assert.Equal(t, c.Timeout, 30*time.Second)
	assert.Equal(t, len(tk.Reference), 3)
	assert.Equal(t, tk.Reference[0].Args["content"], "#!/bin/bash\necho \"Hello, $(cat /app/data/name.txt)!\" > /app/hello.txt\n")
	// The standard compose file's log mounts are named, as every key not carried over is.
	assert.DeepEqual(t, o.Notes, []string{`compose key "volumes" of the service (2 mounts) is not carried over: nothing of the host is mounted`})
}

func TestHarbor(t *testing.T) {
	src, _ := filepath.Abs(filepath.Join(fixtures, "harbor/harbor-hello"))
	tk, o, log := importOne(t, harbor.Format, src)
	assert.Equal(t, tk.Name, "harbor-hello")
	assert.Equal(t, tk.Description, "Greet the name the image provides.")
	assert.Equal(t, tk.Timeout, 2*time.Minute)
	assert.Equal(t, tk.DockerfilePath(), filepath.Join(src, "environment/Dockerfile"))
	assert.Equal(t, tk.Environment.CPUs, 1.0)
	assert.Equal(t, tk.Environment.MemoryMB, 512)
	assert.Equal(t, tk.Environment.Network, false)
	assert.Equal(t, tk.Assert[0].Spec.(task.CommandCheck).Format, "pytest")
	assert.Equal(t, len(tk.Assert), 2, "the tests and the reward")
	assert.Equal(t, tk.Score.File, "/logs/verifier/reward.txt")
	assert.DeepEqual(t, o.Notes, []string{"storage_mb = 1024: no disk limit"})
	assert.Assert(t, strings.Contains(log, "unsupported: storage_mb = 1024: no disk limit"), log)
}

func write(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(dir, name)
		assert.NilError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		assert.NilError(t, os.WriteFile(p, []byte(content), 0o644))
	}
}

func TestUnsupportedFeaturesAreReported(t *testing.T) {
	root := t.TempDir()
	base := map[string]string{"task.yaml": "instruction: do it\nparser_name: swebench\n", "Dockerfile": "FROM x\nWORKDIR /src\n", "run-tests.sh": "true\n"}
	keys := map[string]string{"solution.yaml": "- command: ls\n"}
	compose := map[string]string{"solution.sh": "true\n", "docker-compose.yaml": "services:\n  client: {build: {dockerfile: Dockerfile}}\n  db: {image: postgres}\n"}
	extra := map[string]string{"solution.sh": "true\n", "docker-compose.yaml": "services:\n  client:\n    build: {dockerfile: Dockerfile}\n    privileged: true\n    environment:\n      - A=1\n      - B=${X}\n"}
	for name, files := range map[string]map[string]string{"keystrokes": keys, "compose": compose, "extra": extra} {
		write(t, filepath.Join(root, name), base)
		write(t, filepath.Join(root, name), files)
	}
	write(t, filepath.Join(root, "no-tests"), map[string]string{"task.yaml": "instruction: x\n", "Dockerfile": "FROM x\n"})

	var log bytes.Buffer
	out := t.TempDir()
	outcomes, err := importer.Import(terminalbench.Format, root, out, &log)
	assert.NilError(t, err)
	byName := map[string]importer.Outcome{}
	for _, o := range outcomes {
		byName[filepath.Base(o.Dir)] = o
	}
	assert.ErrorContains(t, byName["compose"].Err, "compose services client, db: runner runs one container per task")
	assert.ErrorContains(t, byName["no-tests"].Err, "run-tests.sh")
	assert.DeepEqual(t, byName["keystrokes"].Notes, []string{
		"keystroke solution (solution.yaml): no reference:, so the oracle cannot play this task",
		`parser "swebench": the tests' exit code decides, without per-test results`,
	})
	assert.NilError(t, byName["extra"].Err)
	assert.DeepEqual(t, byName["extra"].Notes, []string{
		`compose key "privileged" of the service is ignored`,
		"environment variable B=${X} needs the harness's substitution; left out",
		`parser "swebench": the tests' exit code decides, without per-test results`,
	})
	tk := load(t, byName["extra"].File)
	assert.Equal(t, tk.Env["A"], "1")
	assert.Equal(t, tk.Environment.Workdir, "/src")
	assert.Assert(t, strings.Contains(log.String(), "SKIP "+filepath.Join(root, "compose")+": compose services"), log.String())
	load(t, byName["keystrokes"].File)

	_, err = importer.Import(harbor.Format, root, out, &log)
	assert.ErrorContains(t, err, "is no harbor task and holds none")
}

func TestHarborOptions(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, map[string]string{
		"instruction.md": "Do it.\n",
		"task.toml": `[environment]
docker_image = "example/img:1"
memory = "2G"
gpus = 1
network_mode = "no-network"
[environment.env]
MODE = "fast"
KEY = "${{ANTHROPIC_API_KEY:-}}"
[verifier.env]
SECRET = "x"
`,
		"tests/test.sh": "echo '{\"reward\": 1}' > /logs/verifier/reward.json\n",
	})
	tk, o, _ := importOne(t, harbor.Format, dir)
	assert.Equal(t, tk.Environment.Image, "example/img:1")
	assert.Equal(t, tk.Environment.MemoryMB, 2048)
	assert.Equal(t, tk.Environment.Network, false)
	assert.Equal(t, tk.Env["MODE"], "fast")
	_, leaked := tk.Env["KEY"]
	assert.Assert(t, !leaked)
	assert.Equal(t, tk.Score.File, "/logs/verifier/reward.json")
	assert.Equal(t, tk.Assert[0].Spec.(task.CommandCheck).Format, "")
	assert.Equal(t, len(tk.Reference), 0)
	assert.Equal(t, len(o.Notes), 5, "%v", o.Notes)
}

func TestRewardCheck(t *testing.T) {
	dir := t.TempDir()
	for content, pass := range map[string]bool{"1\n": true, "1.0": true, "0\n": false, "0.99": false, "": false, "x": false} {
		f := filepath.Join(dir, "reward.txt")
		assert.NilError(t, os.WriteFile(f, []byte(content), 0o644))
		err := exec.Command("sh", "-c", importer.RewardCheck(f)).Run()
		assert.Equal(t, err == nil, pass, "reward %q", content)
	}
	assert.Assert(t, exec.Command("sh", "-c", importer.RewardCheck(filepath.Join(dir, "missing"))).Run() != nil)
}

// TestMarshalKeepsScriptsExact: whatever a solution or prompt holds (leading spaces, tabs,
// trailing blanks, CRLF, quotes, a document marker) comes back from the task file unchanged.
func TestMarshalKeepsScriptsExact(t *testing.T) {
	for _, text := range []string{
		"  indented first line\nsecond\n",
		"tab\there\n\n\n",
		"trailing spaces   \nend",
		"crlf\r\nline\r\n",
		"---\n...\n# not a comment\n'quoted' \"double\" : colon\n",
		"ends without newline",
		"#!/bin/bash\nset -e\ncat <<'EOF' > x\n  keep\nEOF\n",
		"\nleading newline\n",
		"unicode é ✓ \u2028 \x7f\n",
		"- a list?\n- no\n",
		"key: value\n",
	} {
		dir := t.TempDir()
		s := importer.Spec{Name: "t", Prompt: text, Image: "img", TestCommand: "true", Solution: text}
		data, err := s.Marshal(dir)
		assert.NilError(t, err)
		path := filepath.Join(dir, "t.yaml")
		assert.NilError(t, os.WriteFile(path, data, 0o644))
		tk := load(t, path)
		assert.Equal(t, tk.Prompt, text, "%s", data)
		assert.Equal(t, tk.Reference[0].Args["content"], text, "%s", data)
	}
}

func TestTerminalBenchDescriptions(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, map[string]string{
		"task.yaml":    "descriptions:\n  - key: hard\n    description: Do it blind.\n  - key: base\n    description: Do it.\n",
		"Dockerfile":   "FROM x\n",
		"run-tests.sh": "pytest -rA\n",
		"solution.sh":  "true\n",
	})
	tk, o, _ := importOne(t, terminalbench.Format, dir)
	assert.Equal(t, tk.Prompt, "Do it.")
	assert.DeepEqual(t, o.Notes, []string{"2 descriptions: only the base one is the prompt"})
	assert.Equal(t, tk.Verify.Copy, "", "no tests/ directory: run-tests.sh alone")
}

// TestImportRefusesSymlinksLeavingTheTaskDir performs the import attack: instruction.md,
// solve.sh, solution.sh and a file under tests/ are symlinks to a host file (think
// ~/.ssh/id_rsa). The import must refuse each task, naming the file, and copy nothing.
func TestImportRefusesSymlinksLeavingTheTaskDir(t *testing.T) {
	secret := filepath.Join(t.TempDir(), "id_rsa")
	assert.NilError(t, os.WriteFile(secret, []byte("-----BEGIN OPENSSH PRIVATE KEY----- hostsecret\n"), 0o600))
	harborTask := map[string]string{"instruction.md": "Do it.\n", "task.toml": "[environment]\ndocker_image = \"img\"\n",
		"tests/test.sh": "pytest -rA\n", "solution/solve.sh": "true\n"}
	tbTask := map[string]string{"task.yaml": "instruction: do it\n", "Dockerfile": "FROM x\n", "run-tests.sh": "true\n",
		"solution.sh": "true\n", "tests/test_x.py": "def test_x(): pass\n"}
	for _, tc := range []struct {
		format importer.Format
		files  map[string]string
		link   string
	}{
		{harbor.Format, harborTask, "instruction.md"},
		{harbor.Format, harborTask, "solution/solve.sh"},
		{harbor.Format, harborTask, "tests/secret.txt"},
		{terminalbench.Format, tbTask, "solution.sh"},
		{terminalbench.Format, tbTask, "run-tests.sh"},
		{terminalbench.Format, tbTask, "task.yaml"},
		{terminalbench.Format, tbTask, "tests/secret.txt"},
	} {
		t.Run(tc.format.Name+"/"+tc.link, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "task")
			write(t, dir, tc.files)
			link := filepath.Join(dir, filepath.FromSlash(tc.link))
			_ = os.Remove(link)
			assert.NilError(t, os.Symlink(secret, link))
			out := t.TempDir()
			var log bytes.Buffer
			outcomes, err := importer.Import(tc.format, dir, out, &log)
			if tc.link == "task.yaml" {
				// The task file itself a link out: not even recognised as a task... or refused.
				if err != nil {
					return
				}
			} else {
				assert.NilError(t, err)
			}
			assert.Equal(t, len(outcomes), 1)
			assert.ErrorContains(t, outcomes[0].Err, tc.link)
			assert.ErrorContains(t, outcomes[0].Err, "leaves the task directory")
			assertNowhere(t, out, "hostsecret")
			assert.Assert(t, !strings.Contains(log.String(), "hostsecret"))
		})
	}
}

// assertNowhere fails if any file under dir holds s.
func assertNowhere(t *testing.T, dir, s string) {
	t.Helper()
	_ = filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			b, _ := os.ReadFile(p)
			assert.Assert(t, !strings.Contains(string(b), s), "%s holds %q", p, s)
		}
		return nil
	})
}

// TestImportCapsFileSize performs the memory attack: a 1 GiB sparse instruction.md. The
// import refuses it at once, naming the file, without reading it.
func TestImportCapsFileSize(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "task")
	write(t, dir, map[string]string{"task.toml": "[environment]\ndocker_image = \"img\"\n", "tests/test.sh": "true\n", "instruction.md": ""})
	assert.NilError(t, os.Truncate(filepath.Join(dir, "instruction.md"), 1<<30))
	start := time.Now()
	outcomes, err := importer.Import(harbor.Format, dir, t.TempDir(), &bytes.Buffer{})
	assert.NilError(t, err)
	assert.ErrorContains(t, outcomes[0].Err, "instruction.md: 1073741824 bytes, more than the 1 MiB a file of an imported task may have")
	assert.Assert(t, time.Since(start) < 5*time.Second)

	write(t, dir, map[string]string{"instruction.md": "Do it.\n", "tests/test.sh": strings.Repeat("#", importer.MaxFile+1)})
	outcomes, err = importer.Import(harbor.Format, dir, t.TempDir(), &bytes.Buffer{})
	assert.NilError(t, err)
	assert.ErrorContains(t, outcomes[0].Err, "tests/test.sh: 1048577 bytes, more than the 1 MiB")
}

// TestHarborNetworkIsNeverWidened: each way Harbor says "less network" turns it off; what
// runner cannot enforce (an allowlist) is off with a note; every key not carried over
// (storage, compose volumes:) is named.
func TestHarborNetworkIsNeverWidened(t *testing.T) {
	for _, tc := range []struct {
		name, toml, compose string
		network             bool
		notes               []string
	}{
		{"default", "", "", true, nil},
		{"environment no-network", "[environment.network]\nmode = \"no-network\"\n", "", false, nil},
		{"agent no-network", "[agent.network]\nmode = \"no-network\"\n", "", false, nil},
		{"verifier no-network", "[verifier.network]\nmode = \"no-network\"\n", "", false, nil},
		{"allowlist", "[environment.network]\nmode = \"allowlist\"\nallowed_hosts = [\"pypi.org\"]\n", "", false, []string{
			`[environment.network] mode = "allowlist": runner has no allowlists yet, so the task runs with no network`,
			"task.toml key environment.network.allowed_hosts is not carried over"}},
		{"unknown mode", "[agent.network]\nmode = \"proxy\"\n", "", false, []string{`[agent.network] mode = "proxy" is unknown: no network rather than a guess`}},
		{"storage", "[environment.storage]\nsize = \"10G\"\n", "", true, []string{"task.toml key environment.storage.size is not carried over"}},
		{"compose", "", "services:\n  main:\n    build: .\n    network_mode: none\n    volumes: [\"/:/host\"]\n", false, []string{
			`compose key "volumes" of the service (1 mounts) is not carried over: nothing of the host is mounted`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "task")
			files := map[string]string{"instruction.md": "Do it.\n", "tests/test.sh": "true\n",
				"task.toml": "[environment]\ndocker_image = \"img\"\n" + tc.toml}
			if tc.compose != "" {
				files["environment/docker-compose.yaml"] = tc.compose
			}
			write(t, dir, files)
			tk, o, _ := importOne(t, harbor.Format, dir)
			assert.Equal(t, tk.Environment.Network, tc.network)
			var notes []string
			for _, n := range o.Notes {
				if !strings.HasPrefix(n, "no solution") {
					notes = append(notes, n)
				}
			}
			assert.DeepEqual(t, notes, tc.notes)
		})
	}
}

// TestTerminalBenchRunTestsPrecedence: with run-tests.sh and tests/run-tests.sh, the
// harness copies run-tests.sh and then tests/ into /tests, so tests/run-tests.sh is run.
func TestTerminalBenchRunTestsPrecedence(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, map[string]string{"task.yaml": "instruction: do it\n", "Dockerfile": "FROM x\n", "solution.sh": "true\n",
		"run-tests.sh": "echo top\n", "tests/run-tests.sh": "echo inner\n"})
	tk, o, _ := importOne(t, terminalbench.Format, dir)
	_, top := tk.Verify.Files["run-tests.sh"]
	assert.Assert(t, !top, "the top-level script must not stand in for tests/run-tests.sh")
	assert.Assert(t, strings.HasSuffix(tk.Verify.Copy, "tests"))
	assert.DeepEqual(t, o.Notes, []string{"run-tests.sh and tests/run-tests.sh both exist: tests/run-tests.sh is the one run, as in Terminal-Bench's harness (it copies tests/ into /tests after run-tests.sh)"})

	// tests/run-tests.sh alone is enough.
	dir = t.TempDir()
	write(t, dir, map[string]string{"task.yaml": "instruction: do it\n", "Dockerfile": "FROM x\n", "solution.sh": "true\n", "tests/run-tests.sh": "echo inner\n"})
	tk, o, _ = importOne(t, terminalbench.Format, dir)
	assert.Equal(t, len(tk.Verify.Files), 0)
	assert.Equal(t, len(o.Notes), 0, "%v", o.Notes)
}

// TestImportVerifiesWhereTheHarnessDoes: Terminal-Bench and Harbor run the tests in the
// agent's container, so imported tasks do too, saying why in the task file and once on
// the console; --fresh-container (Options.FreshContainer) sets verify.fresh_container.
func TestImportVerifiesWhereTheHarnessDoes(t *testing.T) {
	for _, f := range []struct {
		format importer.Format
		src    string
		why    string
	}{
		{terminalbench.Format, "terminal-bench/tb-hello", "# verify.fresh_container is not set: Terminal-Bench runs the tests in the agent's"},
		{harbor.Format, "harbor/harbor-hello", "# verify.fresh_container is not set: Harbor's verifier runs tests/test.sh in the agent's"},
	} {
		src, _ := filepath.Abs(filepath.Join(fixtures, f.src))
		tk, o, log := importOne(t, f.format, src)
		assert.Assert(t, !tk.Verify.FreshContainer)
		b, err := os.ReadFile(o.File)
		assert.NilError(t, err)
		assert.Assert(t, strings.Contains(string(b), f.why+"\n"), "%s", b)
		assert.Equal(t, strings.Count(log, "note: verify.fresh_container is not set"), 1, log)

		out := t.TempDir()
		var buf bytes.Buffer
		outcomes, err := importer.ImportWith(f.format, src, out, &buf, importer.Options{FreshContainer: true})
		assert.NilError(t, err)
		assert.NilError(t, outcomes[0].Err)
		tk = load(t, outcomes[0].File)
		assert.Assert(t, tk.Verify.FreshContainer)
		b, err = os.ReadFile(outcomes[0].File)
		assert.NilError(t, err)
		assert.Assert(t, !strings.Contains(string(b)+buf.String(), "is not set"), "%s", b)
	}
}
