package tests

import (
	"os/exec"
	"strings"
	"testing"

	"gotest.tools/v3/assert"
)

// The binary leaves out what only tests use: the Gemini SDK, whose dependencies' init
// (grpc, opencensus, s2a) cost about 3 ms of every start and 12 MB (runner/model/gemini
// speaks REST and keeps the SDK as its test oracle), and the fake model server.
func TestBinaryLeavesOutTestOnlyCode(t *testing.T) {
	t.Parallel()
	out, err := exec.Command("go", "version", "-m", runnerBin).Output()
	assert.NilError(t, err)
	for _, mod := range []string{"google.golang.org/genai", "google.golang.org/grpc", "go.opencensus.io", "github.com/google/s2a-go"} {
		assert.Check(t, !strings.Contains(string(out), "\t"+mod+"\t"), "%s is linked into %s", mod, runnerBin)
	}
	out, err = exec.Command("go", "list", "-deps", "github.com/agentrunner/runner").Output()
	assert.NilError(t, err)
	for _, pkg := range strings.Fields(string(out)) {
		assert.Check(t, !strings.Contains(pkg, "/fakellm"), "the runner imports %s", pkg)
	}
}
