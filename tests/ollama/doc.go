// Package ollama is runner's suite against the real Ollama server (make e2e-ollama): the
// server built from the module go.mod requires (build-server.sh), a tiny deterministic
// model (internal/bigram), and runner's binary run end to end against them. Its tests
// carry the build tag ollama_e2e, so `go test ./...` leaves them out: they need the
// server binary, whose first build takes 10-20 minutes.
package ollama
