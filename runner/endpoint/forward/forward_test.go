package forward

import (
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"gotest.tools/v3/assert"
)

// The forwarder carries the program's TCP connections to the Unix socket, and exits
// with the program's status.
func TestRunCarriesConnectionsAndReturnsTheExitCode(t *testing.T) {
	curl, err := exec.LookPath("curl")
	if err != nil {
		t.Skip("curl is not installed")
	}
	sock := filepath.Join(t.TempDir(), "endpoint.sock")
	l, err := net.Listen("unix", sock)
	assert.NilError(t, err)
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = fmt.Fprintf(w, "endpoint saw %s", r.URL.Path) })}
	go func() { _ = srv.Serve(l) }()
	defer func() { _ = srv.Close() }()

	free, err := net.Listen("tcp", "127.0.0.1:0")
	assert.NilError(t, err)
	addr := free.Addr().String()
	assert.NilError(t, free.Close())
	out := filepath.Join(t.TempDir(), "out")
	script := fmt.Sprintf(`%s -sS http://%s/v1/models > %s && exit 7`, curl, addr, out)
	code := Run([]string{sock, addr, "/bin/sh", "-c", script})
	assert.Equal(t, code, 7)
	b, err := os.ReadFile(out)
	assert.NilError(t, err)
	assert.Equal(t, string(b), "endpoint saw /v1/models")

	assert.Equal(t, Run([]string{sock, addr}), Failed, "too few arguments")
	assert.Equal(t, Run([]string{sock, addr, "/nonexistent/program"}), Failed)
}
