package ollama

import (
	"bufio"
	"io"
	"regexp"
	"strconv"
	"strings"

	"github.com/agentrunner/runner/runner/model"
)

// ServerLog is what an Ollama server's log says that its API does not (Ollama 0.17 has
// no endpoint for its devices or its parallel setting): read from the lines a server
// (and the model runners it starts) writes with Go's slog text handler.
type ServerLog struct {
	// GPUs are the devices of the last inventory the server printed at start
	// (msg="inference compute"); one with ID "cpu" when it found no GPU.
	GPUs []model.GPU
	// Loads counts the models the server loaded (msg="loading model": one per load,
	// whichever engine runs the model).
	Loads int
	// Parallel is the number of requests the last loaded model runs at once
	// (OLLAMA_NUM_PARALLEL, from the runner's load request; 0 when no load was logged),
	// and KVSize its KV cache in tokens: the context length times Parallel.
	Parallel, KVSize int
}

var (
	parallelField = regexp.MustCompile(`\bParallel:(\d+)`)
	kvSizeField   = regexp.MustCompile(`\bKvSize:(\d+)`)
)

// ReadServerLog reads a server's log from r; lines that are not slog records are
// skipped. A log is the server's text, read as data: only the fields above are taken.
func ReadServerLog(r io.Reader) (ServerLog, error) {
	var out ServerLog
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	inventory := false // the last line was part of an inventory
	for sc.Scan() {
		fields := logFields(sc.Text())
		switch fields["msg"] {
		case "inference compute":
			if !inventory {
				out.GPUs = nil // a new inventory: the server restarted
			}
			inventory = true
			out.GPUs = append(out.GPUs, model.GPU{
				ID: fields["id"], Name: fields["description"], Library: fields["library"],
				Compute: fields["compute"], Driver: fields["driver"], Memory: fields["total"],
			})
			continue
		case "loading model":
			out.Loads++
		case "load":
			req := fields["request"]
			if m := parallelField.FindStringSubmatch(req); m != nil {
				out.Parallel, _ = strconv.Atoi(m[1])
			}
			if m := kvSizeField.FindStringSubmatch(req); m != nil {
				out.KVSize, _ = strconv.Atoi(m[1])
			}
		}
		inventory = false
	}
	return out, sc.Err()
}

// logFields splits one slog text record (key=value pairs, either side quoted when it
// holds spaces or quotes) into a map; nil for other lines.
func logFields(line string) map[string]string {
	if !strings.HasPrefix(line, "time=") {
		return nil
	}
	out := map[string]string{}
	for line != "" {
		line = strings.TrimLeft(line, " ")
		key, rest, ok := quotedOrBare(line, "= ")
		if !ok || !strings.HasPrefix(rest, "=") {
			break
		}
		value, rest, ok := quotedOrBare(rest[1:], " ")
		if !ok {
			break
		}
		out[key] = value
		line = rest
	}
	return out
}

// quotedOrBare reads a Go-quoted string, or text up to the first of stop, from the start
// of s, and returns it and the rest.
func quotedOrBare(s, stop string) (token, rest string, ok bool) {
	if strings.HasPrefix(s, `"`) {
		q, err := strconv.QuotedPrefix(s)
		if err != nil {
			return "", "", false
		}
		token, err = strconv.Unquote(q)
		return token, s[len(q):], err == nil
	}
	i := strings.IndexAny(s, stop)
	if i < 0 {
		return s, "", true
	}
	return s[:i], s[i:], true
}
