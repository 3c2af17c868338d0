package tests

import (
	"os/exec"
	"strings"
	"testing"

	"gotest.tools/v3/assert"
)

// startupHeavy are modules that were linked into the binary once and cost milliseconds of
// every start (Go runs each linked package's init, used or not), or that only tests need.
// None may come back through a new import; `go mod why -m MODULE` shows what pulls one in.
var startupHeavy = map[string]string{
	"google.golang.org/genai": "the Gemini SDK: runner/model/gemini speaks REST and keeps the SDK as its test oracle; " +
		"with its dependencies' init (grpc, opencensus, s2a) it cost ~3 ms of every start and 12 MB",
	"google.golang.org/grpc":                   "gRPC (came with genai's credentials)",
	"go.opencensus.io":                         "OpenCensus (regexps and a goroutine at init)",
	"github.com/google/s2a-go":                 "S2A protos (came with genai)",
	"google.golang.org/protobuf":               "protobuf registries (came with genai)",
	"github.com/russross/blackfriday/v2":       "urfave/cli's man pages, left out by -tags urfave_cli_no_docs (~0.3 ms of init)",
	"github.com/cpuguy83/go-md2man/v2":         "urfave/cli's man pages, left out by -tags urfave_cli_no_docs",
	"github.com/santhosh-tekuri/jsonschema/v6": "the test-only schema oracle (compiling its meta-schemas at init cost 5-6 ms)",
	"github.com/anthropics/anthropic-sdk-go": "the Anthropic SDK: runner/model/anthropic speaks REST and keeps the SDK as its test oracle; " +
		"with OpenTelemetry and tidwall's JSON packages it was 46 of the binary's 472 packages",
	"github.com/openai/openai-go/v3": "the OpenAI SDK: openai-responses speaks through go-openai, as openai does, and keeps the SDK " +
		"as its test oracle; it was 25 of the binary's packages",
	"go.opentelemetry.io/otel": "OpenTelemetry (came with the Anthropic SDK)",
	"github.com/tidwall/gjson": "the SDKs' JSON paths (came with the Anthropic and OpenAI SDKs)",
	"github.com/tidwall/sjson": "the SDKs' JSON paths (came with the Anthropic and OpenAI SDKs)",
	"github.com/invopop/jsonschema": "a second JSON Schema library: runner/schemas reflects with google/jsonschema-go, " +
		"which the MCP SDK links anyway",
	"github.com/pb33f/ordered-map/v2": "invopop/jsonschema's ordered map",
	"github.com/coder/websocket":      "the OpenAI SDK's realtime transport",
}

// The binary, built as the Makefile and releases build it, leaves out what only tests use
// and what once made every start slow: the modules above, the fake model server and the
// testing package.
func TestBinaryLeavesOutTestOnlyAndStartupHeavyCode(t *testing.T) {
	t.Parallel()
	out, err := exec.Command("go", "version", "-m", runnerBin).Output()
	assert.NilError(t, err)
	for mod, why := range startupHeavy {
		assert.Check(t, !strings.Contains(string(out), "\t"+mod+"\t"), "%s is linked into %s: %s", mod, runnerBin, why)
	}
	out, err = exec.Command("go", "list", "-tags", buildTags, "-deps", "github.com/agentrunner/runner").Output()
	assert.NilError(t, err)
	for _, pkg := range strings.Fields(string(out)) {
		assert.Check(t, !strings.Contains(pkg, "/fakellm"), "the runner imports %s", pkg)
		assert.Check(t, pkg != "testing", "the runner imports the testing package")
	}
}
