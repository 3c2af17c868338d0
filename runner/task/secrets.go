package task

import (
	"os"

	"github.com/goccy/go-yaml/ast"

	"github.com/agentrunner/runner/tools"
)

// secrets decodes secrets:, the names of variables whose values are secret. Their values
// are resolved in resolveSecrets, once env: is known too.
func (l *loader) secrets(n ast.Node, field string) {
	items, _ := l.d.items(n, field)
	for i, it := range items {
		f := index(field, i)
		name, ok := l.d.nonEmpty(it, f)
		switch {
		case !ok:
			continue
		case !validEnvName(name):
			l.d.fail(it, f, "invalid variable name %q: use letters, digits and _, not starting with a digit", name)
		case tools.CheckEnv(map[string]string{name: ""}) != nil:
			l.d.fail(it, f, "%v", tools.CheckEnv(map[string]string{name: ""}))
		case contains(l.t.Secrets, name):
			l.d.fail(it, f, "%s is listed twice", name)
		default:
			l.t.Secrets = append(l.t.Secrets, name)
			l.secretNodes = append(l.secretNodes, it)
		}
	}
}

// resolveSecrets gives each secret variable its value: the task's env: when it sets one
// (the task marks its own value secret), else the runner's environment (so the value need
// not be written in a task file that is committed). The value is passed to the task's
// commands like env:. Loading touches no state outside the task: whoever runs it
// registers SecretValues with runner/scrub, so that no output of the process shows them.
func (l *loader) resolveSecrets() {
	getenv := l.opts.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	for i, name := range l.t.Secrets {
		v, ok := l.t.Env[name]
		if !ok {
			v = getenv(name)
			if v == "" {
				l.d.warn(l.secretNodes[i], index("secrets", i), "%s is not set in runner's environment: commands get no %s", name, name)
				continue
			}
			if l.t.Env == nil {
				l.t.Env = map[string]string{}
			}
			l.t.Env[name] = v
		}
		if minLen := l.opts.SecretMinLen; len(v) < minLen {
			l.d.warn(l.secretNodes[i], index("secrets", i), "the value of %s is shorter than %d characters: outputs are not scrubbed of it", name, minLen)
		}
	}
}

// SecretValues are the values of the task's secrets: (those it has), for the scrubber.
func (t *Task) SecretValues() []string {
	var out []string
	for _, name := range t.Secrets {
		if v := t.Env[name]; v != "" {
			out = append(out, v)
		}
	}
	return out
}
