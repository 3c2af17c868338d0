package sandbox_test

import (
	"os"
	"testing"

	"github.com/agentrunner/runner/tools/exec/sandbox"
)

func TestMain(m *testing.M) {
	sandbox.RunHelperIfRequested()
	os.Exit(m.Run())
}
