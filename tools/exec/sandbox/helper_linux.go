package sandbox

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"

	"github.com/agentrunner/runner/tools"
	"github.com/agentrunner/runner/tools/exec/sandbox/internal/confine"
)

// selfExe names the running binary in the child between fork and exec, even if the file
// was replaced or deleted since the runner started.
const selfExe = "/proc/self/exe"

// wrapHelper rewrites cmd to run the helper with cfg, which then executes target (program
// path, argv...). cfg.Limits and cfg.Cgroup are filled in here.
func (l *launcher) wrapHelper(cmd *exec.Cmd, ws *tools.Workspace, cfg confine.Config, target []string) error {
	cfg.Limits = confine.Limits(EffectiveLimits(ws.Limits))
	if l.cgroup != nil {
		dir, err := l.cgroup.create(cfg.Limits.Processes)
		if err != nil {
			return err
		}
		cfg.Cgroup = dir
	}
	b, err := json.Marshal(cfg)
	if err != nil {
		return fmt.Errorf("encode helper config: %w", err)
	}
	cmd.Path = selfExe
	cmd.Args = append([]string{"runner-sandbox", confine.Arg, string(b)}, target...)
	return nil
}

// releaseHelper kills what is left of a helper-launched command in its cgroup and removes
// the cgroup and the private temp directory.
func releaseHelper(cmd *exec.Cmd) {
	cfg, ok := configOf(cmd)
	if !ok {
		return
	}
	if cfg.Cgroup != "" {
		removeCgroup(cfg.Cgroup)
	}
	if cfg.Tmp != "" {
		_ = os.RemoveAll(cfg.Tmp)
	}
}

// configOf reads back the helper config of a wrapped command.
func configOf(cmd *exec.Cmd) (confine.Config, bool) {
	var cfg confine.Config
	if len(cmd.Args) < 3 || cmd.Args[1] != confine.Arg {
		return cfg, false
	}
	return cfg, json.Unmarshal([]byte(cmd.Args[2]), &cfg) == nil
}
