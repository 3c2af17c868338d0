package importer_test

// The tests load the task files they import, assert: entries included: the assertion
// kinds are runner/assert's rows, registered with runner/task when it is linked, as it
// is into runner.
import _ "github.com/agentrunner/runner/runner/assert"
