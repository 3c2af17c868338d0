package tools

import (
	"fmt"
	"sort"
	"strings"
)

// loaderVariables are the variables that make the dynamic loader or the C library load
// code or data from a path of the caller's choosing (glibc's "unsecure" list, which it
// itself ignores in setuid programs, without TMPDIR).
var loaderVariables = map[string]bool{
	"GCONV_PATH": true, "GETCONF_DIR": true, "GLIBC_TUNABLES": true, "HOSTALIASES": true,
	"LOCALDOMAIN": true, "LOCPATH": true, "NIS_PATH": true, "NLSPATH": true,
	"RESOLV_HOST_CONF": true, "RES_OPTIONS": true, "TZDIR": true,
}

// IsLoaderVariable reports whether an environment variable steers the dynamic loader or
// the C library to load code or data (LD_PRELOAD, LD_*, MALLOC_*, GCONV_PATH,
// GLIBC_TUNABLES, LOCPATH, ...). Such variables are refused in the environment an agent or
// a task supplies (run_code's env, a task file's env:, secrets: and its MCP servers' env:):
// the sandbox applies the environment only to the confined command, but nothing
// legitimate needs them, and a sandbox that is not there (none) confines nothing. The rule
// is here, with no code of exec's, so that runner/task checks a task file against it.
func IsLoaderVariable(name string) bool {
	return strings.HasPrefix(name, "LD_") || strings.HasPrefix(name, "MALLOC_") || loaderVariables[name]
}

// CheckEnv returns an error naming the first loader variable (see IsLoaderVariable) in
// env, in name order, or nil.
func CheckEnv(env map[string]string) error {
	names := make([]string, 0, len(env))
	for k := range env {
		if IsLoaderVariable(k) {
			names = append(names, k)
		}
	}
	if len(names) == 0 {
		return nil
	}
	sort.Strings(names)
	return fmt.Errorf("%s is refused: it would make the dynamic loader or the C library load code of the caller's choosing (LD_*, MALLOC_*, GCONV_PATH, GLIBC_TUNABLES, LOCPATH, ... are not allowed)", names[0])
}
