package container_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"os"
	osexec "os/exec"
	"path/filepath"
	"strings"
	"testing"

	"gotest.tools/v3/assert"

	"github.com/agentrunner/runner/tools"
	"github.com/agentrunner/runner/tools/exec/container"
)

// fake is an engine client that fails (or answers) as a test says, without containers:
// a shell script named podman or docker that logs each call's arguments and runs the
// first branch of cases (a sh `case "$*" in` body) that matches them.
type fake struct {
	*container.Engine
	dir string
}

func newFake(t *testing.T, flavor, cases string) *fake {
	t.Helper()
	dir := t.TempDir()
	script := "#!/bin/sh\nprintf '%s\\n' \"$*\" >> \"$(dirname \"$0\")/calls\"\ncase \"$*\" in\n" + cases + "\nesac\n"
	p := filepath.Join(dir, flavor)
	assert.NilError(t, os.WriteFile(p, []byte(script), 0o755))
	e, err := container.Find(p)
	assert.NilError(t, err)
	assert.Equal(t, e.Flavor, flavor)
	return &fake{Engine: e, dir: dir}
}

// calls are the argument lists the engine was called with, in order.
func (f *fake) calls(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(f.dir, "calls"))
	if os.IsNotExist(err) {
		return nil
	}
	assert.NilError(t, err)
	return strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
}

// started runs Start against an engine whose `run` prints pull progress before the id.
func started(t *testing.T, flavor, cases string, cfg container.Config) (*fake, *container.Container) {
	t.Helper()
	f := newFake(t, flavor, `run\ *) echo "Trying to pull img..."; echo "Writing manifest"; echo cid1 ;;`+"\n"+cases)
	if cfg.Image == "" {
		cfg.Image = "img"
	}
	c, err := f.Start(context.Background(), cfg)
	assert.NilError(t, err)
	assert.Equal(t, c.ID(), "cid1", "the id is the last line of run's output")
	return f, c
}

func TestStartPassesTheLimits(t *testing.T) {
	t.Parallel()
	f, c := started(t, "podman", "", container.Config{Workspace: "/ws", Workdir: "/src", CPUs: 1.5, MemoryMB: 256, RunID: "r1", Scenario: "s1"})
	run := f.calls(t)[0]
	name, _, _ := strings.Cut(strings.TrimPrefix(run, "run -d --name "), " ")
	assert.Assert(t, strings.HasPrefix(name, "runner-"), run)
	assert.Equal(t, run, "run -d --name "+name+" --label runner.run=r1 --label runner.scenario=s1 --network none --cpus 1.5 --memory 256m --pids-limit 4096 -v /ws:/src:nosuid,nodev -w /src --entrypoint /bin/sh img -c while :; do sleep 86400; done")
	assert.Equal(t, c.Workdir(), "/src")
	assert.Equal(t, c.Name(), "podman")
}

func TestStartRemovesAContainerItCouldNotHandOver(t *testing.T) {
	t.Parallel()
	f := newFake(t, "podman", `run\ *) echo cid1 ;;
exec\ -u\ 0\ cid1\ chown\ *) echo "chown: invalid user: 'app'" >&2; exit 1 ;;`)
	_, err := f.Start(context.Background(), container.Config{Image: "img", Workspace: "/ws", User: "app"})
	assert.Error(t, err, "give /app to user app: podman exec: exit status 1: chown: invalid user: 'app'")
	calls := f.calls(t)
	assert.Equal(t, len(calls), 3, "%q", calls)
	assert.Assert(t, strings.Contains(calls[0], " --user app "), calls[0])
	assert.Equal(t, calls[1], "exec -u 0 cid1 chown -R app /app")
	assert.Equal(t, calls[2], "rm -f -t 0 cid1")
}

func TestDockerFlavor(t *testing.T) {
	t.Parallel()
	f := newFake(t, "docker", `run\ *) echo "docker: Error response from daemon: pull access denied for img" >&2; exit 125 ;;`)
	_, err := f.Start(context.Background(), container.Config{Image: "img", Workspace: "/ws"})
	assert.Error(t, err, "start img: docker run: exit status 125: docker: Error response from daemon: pull access denied for img")
	calls := f.calls(t)
	assert.Equal(t, len(calls), 2, "%q", calls)
	assert.Assert(t, strings.Contains(calls[0], " -v /ws:/app -w "), "docker's -v takes no nosuid: %s", calls[0])
	name, _, _ := strings.Cut(strings.TrimPrefix(calls[0], "run -d --name "), " ")
	assert.Equal(t, calls[1], "rm -f "+name, "the half-made container is removed by name, without podman's -t")
}

func TestWrapTranslatesTheWorkingDirectory(t *testing.T) {
	t.Parallel()
	_, c := started(t, "podman", "", container.Config{Workspace: "/ws"})
	ws, err := tools.OpenWorkspace(t.TempDir())
	assert.NilError(t, err)
	defer func() { _ = ws.Close() }() // test cleanup: its error does not change what the test checked
	for dir, want := range map[string]string{
		"":                                 "/app",
		ws.Dir():                           "/app",
		filepath.Join(ws.Dir(), "a", "b"):  "/app/a/b",
		filepath.Dir(ws.Dir()):             "/app", // outside: the workdir, never a host path
		filepath.Join(ws.Dir(), "..", "x"): "/app",
	} {
		cmd := osexec.Command("pwd")
		cmd.Dir = dir
		assert.NilError(t, c.Wrap(cmd, ws))
		assert.Equal(t, cmd.Args[2], "-w", dir)
		assert.Equal(t, cmd.Args[3], want, dir)
	}
}

func TestEngineFailuresNameTheStep(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("x", 3000)
	_, c := started(t, "podman", `exec\ -u\ 0\ cid1\ /bin/sh\ -c\ rm*) echo "Error: container cid1 is not running" >&2; exit 125 ;;
rm\ *) echo "Error: no such container cid1" >&2; exit 1 ;;
exec\ -u\ 0\ cid1\ rm\ *) echo "rm: cannot remove: read-only file system" >&2; exit 1 ;;`, container.Config{Workspace: "/ws"})
	ctx := context.Background()
	assert.Error(t, c.CopyIn(ctx, "/src", "/tests"), "prepare /tests: podman exec: exit status 125: Error: container cid1 is not running")
	err := c.Remove(ctx)
	assert.Error(t, err, "remove container cid1: podman rm: exit status 1: Error: no such container cid1")
	err = c.RemoveFile(ctx, "/tests")
	assert.Error(t, err, "remove /tests: podman exec: exit status 1: rm: cannot remove: read-only file system")

	g, c2 := started(t, "podman", `cp\ *) echo "Error: `+long+`END" >&2; exit 125 ;;`, container.Config{Workspace: "/ws"})
	err = c2.CopyIn(ctx, "/src", "/tests")
	assert.ErrorContains(t, err, "copy into /tests: podman cp: exit status 125: …")
	assert.Assert(t, strings.HasSuffix(err.Error(), "xxxEND"), "the end of a long message is kept")
	assert.Assert(t, len(err.Error()) < 2100, "cut to 2000 bytes: %d", len(err.Error()))
	assert.Equal(t, g.calls(t)[2], "cp /src/. cid1:/tests")
}

func TestRemoveRun(t *testing.T) {
	t.Parallel()
	f := newFake(t, "podman", `"ps -a -q --filter label=runner.run=r1") printf 'c1\nc2\n' ;;
"ps -a -q --filter label=runner.run=none") ;;
"ps -a -q --filter label=runner.run=broken") echo "Error: cannot connect to the service" >&2; exit 125 ;;`)
	ctx := context.Background()
	n, err := f.RemoveRun(ctx, "r1")
	assert.NilError(t, err)
	assert.Equal(t, n, 2)
	n, err = f.RemoveRun(ctx, "none")
	assert.NilError(t, err)
	assert.Equal(t, n, 0)
	_, err = f.RemoveRun(ctx, "broken")
	assert.Error(t, err, "podman ps: exit status 125: Error: cannot connect to the service")
	calls := f.calls(t)
	assert.Equal(t, calls[1], "rm -f -t 0 c1 c2")
	assert.Equal(t, len(calls), 4, "nothing to remove, no rm: %q", calls)
}

// imageFilesCache is where ImageFiles keeps what it copied out of image id's dir.
func imageFilesCache(id, dir string) string {
	sum := sha256.Sum256([]byte(id + "\x00" + dir))
	return filepath.Join(os.TempDir(), "runner-image-files", hex.EncodeToString(sum[:12]))
}

// TestImageFilesFailures runs with a temp dir of its own (so ImageFiles's cache starts
// empty), hence not in parallel.
func TestImageFilesFailures(t *testing.T) {
	ctx := context.Background()
	const inspect = `image\ inspect\ *) echo sha256:feed ;;`
	copyTo := func(sh string) string { // a cp branch; $3 is its target directory
		return "cp\\ *) set -- $*; " + sh + " ;;"
	}
	t.Run("no image", func(t *testing.T) {
		t.Setenv("TMPDIR", t.TempDir())
		f := newFake(t, "podman", `image\ inspect\ *) echo "Error: img: image not known" >&2; exit 125 ;;`)
		_, err := f.ImageFiles(ctx, "img", "/app")
		assert.Error(t, err, "inspect img: podman image: exit status 125: Error: img: image not known")
	})
	t.Run("temp dir is a file", func(t *testing.T) {
		file := filepath.Join(t.TempDir(), "file")
		assert.NilError(t, os.WriteFile(file, nil, 0o644))
		t.Setenv("TMPDIR", file)
		f := newFake(t, "podman", inspect)
		_, err := f.ImageFiles(ctx, "img", "/app")
		assert.ErrorContains(t, err, "image files: mkdir "+file+": not a directory")
	})
	t.Run("create fails", func(t *testing.T) {
		t.Setenv("TMPDIR", t.TempDir())
		f := newFake(t, "podman", inspect+"\n"+`create\ *) echo "Error: no space left on device" >&2; exit 125 ;;`)
		_, err := f.ImageFiles(ctx, "img", "/app")
		assert.Error(t, err, "image files of img: podman create: exit status 125: Error: no space left on device")
	})
	t.Run("copy fails", func(t *testing.T) {
		t.Setenv("TMPDIR", t.TempDir())
		f := newFake(t, "podman", inspect+"\n"+`create\ *) echo cid9 ;;`+"\n"+copyTo(`echo "Error: permission denied" >&2; exit 125`))
		_, err := f.ImageFiles(ctx, "img", "/app")
		assert.Error(t, err, "image files of img: podman cp: exit status 125: Error: permission denied")
		calls := f.calls(t)
		assert.Equal(t, calls[len(calls)-1], "rm -f cid9", "the helper container is removed")
		entries, err := os.ReadDir(filepath.Dir(imageFilesCache("sha256:feed", "/app")))
		assert.NilError(t, err)
		assert.Equal(t, len(entries), 0, "no partial copy is left")
	})
	t.Run("copied once", func(t *testing.T) {
		t.Setenv("TMPDIR", t.TempDir())
		f := newFake(t, "podman", inspect+"\n"+`create\ *) echo cid9 ;;`+"\n"+copyTo(`echo 42 > "$3/input.txt"`))
		dir, err := f.ImageFiles(ctx, "img", "/app")
		assert.NilError(t, err)
		assert.Equal(t, dir, imageFilesCache("sha256:feed", "/app"))
		b, err := os.ReadFile(filepath.Join(dir, "input.txt"))
		assert.NilError(t, err)
		assert.Equal(t, string(b), "42\n")
		again, err := f.ImageFiles(ctx, "img", "/app")
		assert.NilError(t, err)
		assert.Equal(t, again, dir)
		assert.Equal(t, len(f.calls(t)), 5, "the second call only inspects: %q", f.calls(t))
	})
	t.Run("the image has no such dir", func(t *testing.T) {
		t.Setenv("TMPDIR", t.TempDir())
		f := newFake(t, "podman", inspect+"\n"+`create\ *) echo cid9 ;;`+"\n"+copyTo(`echo "Error: \"/app\" could not be found on container cid9: no such file or directory" >&2; exit 125`))
		dir, err := f.ImageFiles(ctx, "img", "/app")
		assert.NilError(t, err)
		entries, err := os.ReadDir(dir)
		assert.NilError(t, err)
		assert.Equal(t, len(entries), 0)
	})
	t.Run("another scenario copied first", func(t *testing.T) {
		t.Setenv("TMPDIR", t.TempDir())
		cache := imageFilesCache("sha256:feed", "/app")
		f := newFake(t, "podman", inspect+"\n"+`create\ *) echo cid9 ;;`+"\n"+copyTo(`mkdir -p `+cache+` && echo theirs > `+cache+`/input.txt`))
		dir, err := f.ImageFiles(ctx, "img", "/app")
		assert.NilError(t, err)
		assert.Equal(t, dir, cache)
		b, err := os.ReadFile(filepath.Join(dir, "input.txt"))
		assert.NilError(t, err)
		assert.Equal(t, string(b), "theirs\n")
	})
	t.Run("the cache is not a directory", func(t *testing.T) {
		t.Setenv("TMPDIR", t.TempDir())
		cache := imageFilesCache("sha256:feed", "/app")
		f := newFake(t, "podman", inspect+"\n"+`create\ *) echo cid9 ;;`+"\n"+copyTo(`echo junk > `+cache))
		_, err := f.ImageFiles(ctx, "img", "/app")
		assert.ErrorContains(t, err, "image files: rename ")
		assert.ErrorContains(t, err, "not a directory")
	})
}

func TestBuildIsContentHashedAndDoneOnce(t *testing.T) {
	t.Parallel()
	// The fake has an image once it built it: a marker file per tag.
	f := newFake(t, "podman", `image\ inspect\ *) set -- $*; [ -e "$(dirname "$0")/$(echo "$3" | tr /: __)" ] || { echo "Error: image not known" >&2; exit 125; } ;;
build\ *) set -- $*; touch "$(dirname "$0")/$(echo "$4" | tr /: __)" ;;`)
	ctx := context.Background()
	dir := t.TempDir()
	df := filepath.Join(dir, "Dockerfile")
	assert.NilError(t, os.WriteFile(df, []byte("FROM base\nCOPY . /src\n"), 0o644))
	assert.NilError(t, os.MkdirAll(filepath.Join(dir, "sub"), 0o755))
	assert.NilError(t, os.WriteFile(filepath.Join(dir, "sub", "data.txt"), []byte("one"), 0o644))
	assert.NilError(t, os.Symlink("sub/data.txt", filepath.Join(dir, "link")))

	tag, err := f.Build(ctx, df)
	assert.NilError(t, err)
	assert.Assert(t, strings.HasPrefix(tag, "localhost/runner-env:") && len(tag) == len("localhost/runner-env:")+16, tag)
	again, err := f.Build(ctx, df)
	assert.NilError(t, err)
	assert.Equal(t, again, tag)
	builds := 0
	for _, c := range f.calls(t) {
		if strings.HasPrefix(c, "build ") {
			builds++
			assert.Equal(t, c, "build -q -t "+tag+" -f "+df+" "+dir)
		}
	}
	assert.Equal(t, builds, 1, "the same content is built once")

	// A changed link target or file content is a new image.
	assert.NilError(t, os.Remove(filepath.Join(dir, "link")))
	assert.NilError(t, os.Symlink("sub", filepath.Join(dir, "link")))
	relinked, err := f.Build(ctx, df)
	assert.NilError(t, err)
	assert.Assert(t, relinked != tag)
	assert.NilError(t, os.WriteFile(filepath.Join(dir, "sub", "data.txt"), []byte("two"), 0o644))
	changed, err := f.Build(ctx, df)
	assert.NilError(t, err)
	assert.Assert(t, changed != tag && changed != relinked)
}

// TestBuildContextThatCannotBeRead: a missing Dockerfile, and paths longer than the
// system takes (PATH_MAX), made through os.Root, which works below it.
func TestBuildContextThatCannotBeRead(t *testing.T) {
	t.Parallel()
	f := newFake(t, "podman", "")
	ctx := context.Background()
	_, err := f.Build(ctx, filepath.Join(t.TempDir(), "Dockerfile"))
	assert.ErrorContains(t, err, "dockerfile: open ")
	assert.ErrorContains(t, err, "no such file or directory")
	assert.Equal(t, len(f.calls(t)), 0, "nothing reached the engine")

	for _, last := range []string{"file", "dir"} {
		dir := t.TempDir()
		df := filepath.Join(dir, "Dockerfile")
		assert.NilError(t, os.WriteFile(df, []byte("FROM base\n"), 0o644))
		r, err := os.OpenRoot(dir)
		assert.NilError(t, err)
		long := len(dir)
		for long < 3900 {
			name := strings.Repeat("d", 200)
			assert.NilError(t, r.Mkdir(name, 0o755))
			next, err := r.OpenRoot(name)
			assert.NilError(t, err)
			_ = r.Close()
			r, long = next, long+201
		}
		name := strings.Repeat("z", 250)
		if last == "file" {
			fh, err := r.Create(name)
			assert.NilError(t, err)
			_ = fh.Close()
		} else {
			assert.NilError(t, r.Mkdir(name, 0o755))
		}
		_ = r.Close()
		_, err = f.Build(ctx, df)
		assert.ErrorContains(t, err, "build context", last)
		assert.ErrorContains(t, err, "file name too long", last)
	}
}

// TestFindWithNoEngine: not in parallel, for its PATH.
func TestFindWithNoEngine(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	_, err := container.Find("")
	assert.ErrorIs(t, err, container.ErrNoEngine)
	assert.Error(t, err, "no container engine: neither podman nor docker is on PATH; install one, or name one with --engine")
}

func TestImageIDAndStop(t *testing.T) {
	t.Parallel()
	f, c := started(t, "docker", `container\ inspect\ *) echo sha256:abc ;;
stop\ *) echo cid1 ;;`, container.Config{Workspace: "/ws"})
	id, err := c.ImageID(context.Background())
	assert.NilError(t, err)
	assert.Equal(t, id, "sha256:abc")
	assert.NilError(t, c.Stop(context.Background()))
	calls := f.calls(t)
	assert.DeepEqual(t, calls[1:], []string{"container inspect --format {{.Image}} cid1", "stop -t 0 cid1"})

	// An engine that prints nothing, or more than an id, is an error, not an image to run.
	for _, out := range []string{"", "a b"} {
		_, c := started(t, "podman", `container\ inspect\ *) echo "`+out+`" ;;`, container.Config{Workspace: "/ws"})
		_, err := c.ImageID(context.Background())
		assert.ErrorContains(t, err, "the engine printed")
	}
	_, c = started(t, "podman", `stop\ *) echo "no such container" >&2; exit 125 ;;`, container.Config{Workspace: "/ws"})
	assert.ErrorContains(t, c.Stop(context.Background()), "stop container cid1: podman stop: exit status 125: no such container")
}

func TestWrapKeepsValuesOffTheCommandLine(t *testing.T) {
	t.Parallel()
	for _, flavor := range []string{"podman", "docker"} {
		_, c := started(t, flavor, "", container.Config{Workspace: "/ws"})
		ws, err := tools.OpenWorkspace(t.TempDir())
		assert.NilError(t, err)
		defer func() { _ = ws.Close() }() // test cleanup: its error does not change what the test checked
		ws.Env = map[string]string{"PATH": "/opt/bin"}
		cmd := osexec.Command("true")
		cmd.Env = []string{"OPENAI_API_KEY=token-1", "PATH=/opt/bin", "EMPTY=", "CODE_DIR=" + ws.Dir() + "/src"}
		assert.NilError(t, c.Wrap(cmd, ws))
		args := strings.Join(cmd.Args, " ")
		assert.Assert(t, !strings.Contains(args, "token-1"), args)
		assert.Assert(t, strings.Contains(args, " -e OPENAI_API_KEY "), args)
		assert.Assert(t, strings.Contains(args, " -e PATH=/opt/bin "), "a setting of the client's own stays on its command line: %s", args)
		assert.Assert(t, strings.Contains(args, " -e EMPTY= "), args)
		env := strings.Join(cmd.Env, "\n") + "\n"
		assert.Assert(t, strings.Contains(env, "\nOPENAI_API_KEY=token-1\n"), "the value is in the client's environment")
		assert.Assert(t, strings.Contains(env, "\nCODE_DIR=/app/src\n"), "the workspace's path is translated: %s", env)
		assert.Assert(t, !strings.Contains(env, "PATH=/opt/bin"), "the client keeps its own PATH")
	}
}
