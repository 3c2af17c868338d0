package sandbox

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strconv"

	"golang.org/x/sys/unix"

	"github.com/agentrunner/runner/tools"
	"github.com/agentrunner/runner/tools/exec/sandbox/internal/confine"
)

// selfExe names the running binary in the child between fork and exec, even if the file
// was replaced or deleted since the runner started.
const selfExe = "/proc/self/exe"

// helperExe is the helper's executable: the runner itself. make cover's tests swap in a
// coverage build of the runner, whose counters survive the exec (see confine.Config).
var helperExe = selfExe

// wrapHelper rewrites cmd to run the helper with cfg, which then executes target (program
// path, argv...). cfg.Env, cfg.Limits and cfg.Cgroups are filled in here. The config goes
// through a memfd, not argv, and the helper starts with an empty environment (see
// internal/confine).
func (l *launcher) wrapHelper(cmd *exec.Cmd, ws *tools.Workspace, cfg confine.Config, target []string, temps *idlePool[string]) error {
	cfg.Env = cmd.Env
	cfg.CoverDir = os.Getenv("GOCOVERDIR") // set only when measuring coverage
	cfg.Limits = confine.Limits(EffectiveLimits(ws.Limits))
	cg, err := l.cgroupsFor(ws, tools.Limits(cfg.Limits))
	if err != nil {
		return err
	}
	if cg != nil {
		cfg.Cgroups = cg.dirs
	}
	f, err := configFile(cfg)
	if err != nil {
		cg.release()
		return err
	}
	fd := 3 + len(cmd.ExtraFiles)
	cmd.ExtraFiles = append(cmd.ExtraFiles, f)
	cmd.Path = helperExe
	cmd.Args = append([]string{"runner-sandbox", confine.Arg, strconv.Itoa(fd)}, target...)
	cmd.Env = []string{}
	if cfg.CoverDir != "" {
		cmd.Env = []string{"GOCOVERDIR=" + cfg.CoverDir} // the helper's own, not the command's
	}
	l.helpers.Store(cmd, helperRun{cfg: cfg, file: f, cgroups: cg, temps: temps})
	return nil
}

// helperRun is what Release needs of a helper-launched command.
type helperRun struct {
	cfg     confine.Config
	file    *os.File
	cgroups *commandCgroups
	temps   *idlePool[string] // where cfg.Tmp goes back
}

// configFile writes cfg as JSON to a memfd.
func configFile(cfg confine.Config) (*os.File, error) {
	b, _ := json.Marshal(cfg) // strings, numbers and booleans: it cannot fail
	return memfd("runner-sandbox-config", b)
}

// memfd returns a memory file holding b. WriteAt leaves the offset at 0, where the reader
// starts.
func memfd(name string, b []byte) (*os.File, error) {
	fd, err := unix.MemfdCreate(name, unix.MFD_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	f := os.NewFile(uintptr(fd), name)
	if _, err := f.WriteAt(b, 0); err != nil {
		_ = f.Close() // the error above is the one returned
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return f, nil
}

// releaseHelper kills what is left of a helper-launched command in its cgroups, which go
// back to the workspace or are removed, and then likewise its private temp directory,
// which goes back only if the cgroups held everything of the command: without them an
// orphan may still be writing there until the exec tools' sweep.
func (l *launcher) releaseHelper(cmd *exec.Cmd) {
	v, ok := l.helpers.LoadAndDelete(cmd)
	if !ok {
		return
	}
	h := v.(helperRun)
	_ = h.file.Close()
	swept := h.cgroups.release()
	if h.cfg.Tmp != "" {
		releaseTemp(h.temps, h.cfg.Tmp, swept)
	}
}

// configOf returns the helper config of a wrapped command not yet released.
func (l *launcher) configOf(cmd *exec.Cmd) (confine.Config, bool) {
	v, ok := l.helpers.Load(cmd)
	if !ok {
		return confine.Config{}, false
	}
	return v.(helperRun).cfg, true
}

func sealDescriptors(first int) error { return confine.SealDescriptors(first) }
