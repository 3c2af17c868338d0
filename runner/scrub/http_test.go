package scrub

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"gotest.tools/v3/assert"
)

// A page served from an output directory quotes a result file an older runner wrote with
// the key in it; the viewer's handler, wrapped, serves it without.
func TestHandlerScrubsServedPages(t *testing.T) {
	const key = "sk-viewer-0123456789abcdef"
	Add(key)
	page := "<p>reason: HTTP 401: Incorrect API key provided: " + key + "</p>"
	srv := httptest.NewServer(Handler(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Length", "999")
		_, _ = io.WriteString(w, page[:strings.Index(page, key)+5])
		_, _ = io.WriteString(w, page[strings.Index(page, key)+5:])
	})))
	defer srv.Close()
	resp, err := http.Get(srv.URL)
	assert.NilError(t, err)
	defer func() { _ = resp.Body.Close() }() // test cleanup: its error does not change what the test checked
	b, err := io.ReadAll(resp.Body)
	assert.NilError(t, err)
	assert.Equal(t, string(b), strings.ReplaceAll(page, key, Redacted))
}
