package web

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"gotest.tools/v3/assert"

	"github.com/agentrunner/runner/tools"
)

// newRegistry registers the web tools the way the runner does, so tests go through
// argument decoding, schema defaults and Validate as a model's call would.
func newRegistry(t *testing.T, opts Options) *tools.Registry {
	t.Helper()
	r := tools.NewRegistry()
	for _, tl := range Tools(opts) {
		assert.NilError(t, r.Register(tl))
	}
	return r
}

func run(t *testing.T, opts Options, name string, args map[string]any) tools.Result {
	t.Helper()
	return runCtx(t, context.Background(), opts, name, args)
}

// runCtx runs a call in a workspace with Network set (a task with network: true), so
// that tests may use servers on 127.0.0.1; runIn chooses the workspace.
func runCtx(t *testing.T, ctx context.Context, opts Options, name string, args map[string]any) tools.Result {
	t.Helper()
	return runIn(t, ctx, workspace(t, true), opts, name, args)
}

func runIn(t *testing.T, ctx context.Context, ws *tools.Workspace, opts Options, name string, args map[string]any) tools.Result {
	t.Helper()
	raw, err := json.Marshal(args)
	assert.NilError(t, err)
	return newRegistry(t, opts).Run(ctx, name, raw, ws)
}

// workspace opens an empty workspace whose Network is network.
func workspace(t *testing.T, network bool) *tools.Workspace {
	t.Helper()
	ws, err := tools.OpenWorkspace(t.TempDir())
	assert.NilError(t, err)
	t.Cleanup(func() { _ = ws.Close() }) // test cleanup: its error does not change what the test checked
	ws.Network = network
	return ws
}

// server starts an httptest server on 127.0.0.1 with the given routes.
func server(t *testing.T, routes map[string]http.HandlerFunc) *httptest.Server {
	t.Helper()
	mux := http.NewServeMux()
	for p, h := range routes {
		mux.HandleFunc(p, h)
	}
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

func assertFail(t *testing.T, res tools.Result, code tools.ErrorCode, contains ...string) {
	t.Helper()
	assert.Assert(t, !res.Success, "unexpected success: %s", res.Output)
	assert.Assert(t, res.Error != nil)
	assert.Equal(t, res.Error.Code, code, res.Output)
	for _, c := range contains {
		assert.ErrorContains(t, res.Error, c)
	}
}
