package task

import (
	"os"
	"strings"
	"testing"

	"gotest.tools/v3/assert"

	"github.com/agentrunner/runner/runner/scrub"
)

// TestSecretsComeFromEnvOrTheEnvironmentAndLoadingTouchesNoGlobalState: a secret's value
// comes from env: or runner's environment, and loading the file leaves the process as it
// was: the scrubber does not know the values until whoever runs the task registers
// SecretValues (runner/session does, see its TestLoadTasksRegistersSecrets), and the
// environment is unchanged.
func TestSecretsComeFromEnvOrTheEnvironmentAndLoadingTouchesNoGlobalState(t *testing.T) {
	const own, fromHost = "task-own-secret-value", "npm_hostTOKEN0123456789"
	opts := testOptions()
	opts.Getenv = func(k string) string { return map[string]string{"NPM_TOKEN": fromHost}[k] }
	environ := os.Environ()
	got, err := Parse("s.yaml", []byte(`prompt: p
secrets: [DB_PASSWORD, NPM_TOKEN, MISSING_TOKEN]
env: {DB_PASSWORD: `+own+`, OTHER: plain}
`), opts)
	assert.NilError(t, err)
	assert.DeepEqual(t, got.Secrets, []string{"DB_PASSWORD", "NPM_TOKEN", "MISSING_TOKEN"})
	assert.DeepEqual(t, got.Env, map[string]string{"DB_PASSWORD": own, "NPM_TOKEN": fromHost, "OTHER": plain})
	assert.DeepEqual(t, got.Warnings, []string{"s.yaml:2:35: secrets[2]: MISSING_TOKEN is not set in runner's environment: commands get no MISSING_TOKEN"})
	assert.DeepEqual(t, got.SecretValues(), []string{own, fromHost})
	assert.Equal(t, scrub.String("a "+own+" b "+fromHost), "a "+own+" b "+fromHost, "loading registered a secret with the process's scrubber")
	assert.DeepEqual(t, os.Environ(), environ)
}

const plain = "plain"

func TestSecretsErrors(t *testing.T) {
	_, err := Parse("s.yaml", []byte("prompt: p\nsecrets: [A, A, 1X, LD_PRELOAD]\n"), testOptions())
	msg := err.Error()
	for _, want := range []string{
		"s.yaml:2:14: secrets[1]: A is listed twice",
		`s.yaml:2:17: secrets[2]: invalid variable name "1X"`,
		"s.yaml:2:21: secrets[3]: LD_PRELOAD is refused",
	} {
		assert.Assert(t, strings.Contains(msg, want), "want %q in:\n%s", want, msg)
	}
}
