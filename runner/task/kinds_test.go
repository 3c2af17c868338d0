package task_test

// The assertion kinds are rows of runner/assert, which registers their task file side
// with this package when it is linked (task imports nothing of the runtime): this file
// links it into the package's tests, as runner is.
import _ "github.com/agentrunner/runner/runner/assert"
