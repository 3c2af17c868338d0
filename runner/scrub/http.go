package scrub

import "net/http"

// Handler wraps h so that every response body it writes is scrubbed: the hook for pages
// served from an output directory (runner's viewer), which may hold result files written
// by older runners or other machines. Content-Length is dropped, since scrubbing changes
// the length.
func Handler(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sw := &responseWriter{ResponseWriter: w}
		sw.body = NewWriter(w)
		h.ServeHTTP(sw, r)
		_ = sw.body.Flush()
	})
}

type responseWriter struct {
	http.ResponseWriter
	body        *Writer
	wroteHeader bool
}

func (w *responseWriter) WriteHeader(code int) {
	if !w.wroteHeader {
		w.wroteHeader = true
		w.Header().Del("Content-Length")
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *responseWriter) Write(p []byte) (int, error) {
	if !w.wroteHeader {
		w.WriteHeader(http.StatusOK)
	}
	return w.body.Write(p)
}

// Flush writes what the scrubber holds back, then flushes the connection.
func (w *responseWriter) Flush() {
	_ = w.body.Flush()
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}
