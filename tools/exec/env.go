package exec

import (
	"os"
	"sort"
	"strings"

	"github.com/agentrunner/runner/tools"
)

// inherited are the only variables a command takes from the runner's own environment.
var inherited = []string{"PATH", "HOME", "LANG"}

// defaultPath is used when the runner itself has no PATH.
const defaultPath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

// secretMarkers are name fragments that mark a variable as a credential.
var secretMarkers = []string{"KEY", "TOKEN", "SECRET", "PASSWORD", "CREDENTIAL", "AUTH"}

// IsSecretName reports whether an environment variable's name looks like a credential:
// it contains KEY, TOKEN, SECRET, PASSWORD, CREDENTIAL or AUTH, in any case.
func IsSecretName(name string) bool {
	upper := strings.ToUpper(name)
	for _, m := range secretMarkers {
		if strings.Contains(upper, m) {
			return true
		}
	}
	return false
}

// CommandEnv builds the environment of a command the agent runs. The agent is untrusted
// and the runner's environment holds the model provider's API keys, so the environment is
// built from nothing rather than filtered:
//
//   - PATH, HOME and LANG are taken from the runner (PATH defaults to the usual system
//     directories, LANG to C.UTF-8), unless the name looks like a credential (see
//     IsSecretName): nothing else of the runner's environment is ever passed on;
//   - TERM=dumb, so that tools print plain text rather than colours and cursor motion;
//   - then taskEnv, the task file's env: an entry is passed even if its name looks like a
//     credential, since the task's author chose to give it;
//   - then callEnv (run_code's env argument), which may override any of the above.
//
// The result is sorted by name, so runs are reproducible.
func CommandEnv(taskEnv, callEnv map[string]string) []string {
	env := map[string]string{}
	for _, name := range inherited {
		if v, ok := os.LookupEnv(name); ok && !IsSecretName(name) {
			env[name] = v
		}
	}
	if env["PATH"] == "" {
		env["PATH"] = defaultPath
	}
	if env["LANG"] == "" {
		env["LANG"] = "C.UTF-8"
	}
	env["TERM"] = "dumb"
	for k, v := range taskEnv {
		env[k] = v
	}
	for k, v := range callEnv {
		env[k] = v
	}
	out := make([]string, 0, len(env))
	for k, v := range env {
		out = append(out, k+"="+v)
	}
	sort.Strings(out)
	return out
}

// WorkspaceEnv is CommandEnv for a command in ws: the task's env, with XDG_CACHE_HOME
// pointing at ws.CacheDir when there is one (the task's env may still override it).
func WorkspaceEnv(ws *tools.Workspace, callEnv map[string]string) []string {
	taskEnv := ws.Env
	if ws.CacheDir != "" {
		taskEnv = map[string]string{"XDG_CACHE_HOME": ws.CacheDir}
		for k, v := range ws.Env {
			taskEnv[k] = v
		}
	}
	return CommandEnv(taskEnv, callEnv)
}

// lookupEnv returns the value of name in an environment list, as getenv would.
func lookupEnv(env []string, name string) string {
	for _, kv := range env {
		if k, v, ok := strings.Cut(kv, "="); ok && k == name {
			return v
		}
	}
	return ""
}
