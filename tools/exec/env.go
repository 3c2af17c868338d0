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
// pointing at the workspace's layer over the shared cache when there is one (see
// tools.Workspace.CacheHome; the task's env may still override it). Without a layer
// (it could not be made) commands keep their private, cold cache.
// With ws.NoWorkspaceCode the result loads no code from the working directory unless
// callEnv (the tool's or server's own variables) says otherwise (see NoWorkspaceCode).
func WorkspaceEnv(ws *tools.Workspace, callEnv map[string]string) []string {
	taskEnv := ws.Env
	if home, _ := ws.CacheHome(); home != "" {
		taskEnv = map[string]string{"XDG_CACHE_HOME": home}
		for k, v := range ws.Env {
			taskEnv[k] = v
		}
	}
	env := CommandEnv(taskEnv, callEnv)
	if ws.NoWorkspaceCode {
		env = NoWorkspaceCode(env, callEnv)
	}
	return env
}

// searchPaths are the variables whose empty or relative entries make a program look in
// its working directory for programs or modules.
var searchPaths = []string{"PATH", "PYTHONPATH", "PERL5LIB", "RUBYLIB", "CLASSPATH", "GEM_PATH"}

// NoWorkspaceCode rewrites env so that a command started in the workspace loads no code
// from it by itself: PYTHONSAFEPATH=1 (python -m and -c no longer put the working
// directory first on sys.path, so the agent's py_compile.py is not imported in place of
// the real one), no empty, "." or other relative entries in PATH, PYTHONPATH and their
// kin, and no NODE_PATH. A variable that declared sets (the tool's own) is left as it is.
// What a command reads from its working directory on purpose (pytest's conftest.py, a
// Makefile, .git/config) is still the agent's: see the README on what a task tool may trust.
func NoWorkspaceCode(env []string, declared map[string]string) []string {
	out := make([]string, 0, len(env)+1)
	safe := false
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		if _, ok := declared[k]; ok {
			safe = safe || k == "PYTHONSAFEPATH"
			out = append(out, kv)
			continue
		}
		switch {
		case k == "NODE_PATH":
			continue
		case k == "PYTHONSAFEPATH":
			continue // set below
		case contains(searchPaths, k):
			var keep []string
			for _, dir := range strings.Split(v, ":") {
				if strings.HasPrefix(dir, "/") {
					keep = append(keep, dir)
				}
			}
			if len(keep) == 0 && k != "PATH" {
				continue
			}
			if len(keep) == 0 {
				keep = []string{defaultPath}
			}
			kv = k + "=" + strings.Join(keep, ":")
		}
		out = append(out, kv)
	}
	if !safe {
		out = append(out, "PYTHONSAFEPATH=1")
	}
	sort.Strings(out)
	return out
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
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

// IsLoaderVariable reports whether an environment variable steers the dynamic loader or
// the C library to load code or data: see tools.IsLoaderVariable, where the rule lives so
// that a task file's loader (runner/task) applies it too without importing exec.
func IsLoaderVariable(name string) bool { return tools.IsLoaderVariable(name) }

// CheckEnv returns an error naming the first loader variable in env, in name order, or
// nil: tools.CheckEnv.
func CheckEnv(env map[string]string) error { return tools.CheckEnv(env) }
