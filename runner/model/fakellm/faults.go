package fakellm

import (
	"bufio"
	"fmt"
	"net/http"
	"strconv"
)

// body is a reply ready to send: its chunks (one for a plain body, one per event or line
// for a stream) and content type.
type body struct {
	contentType string
	chunks      [][]byte
	stream      bool
}

// write sends the body, flushing after every chunk so a streaming client sees them apart.
func (b body) write(w http.ResponseWriter) {
	w.Header().Set("Content-Type", b.contentType)
	if !b.stream {
		n := 0
		for _, c := range b.chunks {
			n += len(c)
		}
		w.Header().Set("Content-Length", strconv.Itoa(n))
	}
	w.WriteHeader(http.StatusOK)
	flusher, _ := w.(http.Flusher)
	for _, c := range b.chunks {
		if _, err := w.Write(c); err != nil {
			return
		}
		if b.stream && flusher != nil {
			flusher.Flush()
		}
	}
}

// truncate sends the status line, headers and about half the body, then closes the
// connection: a server that died mid-answer. A plain body declares its full length, so the
// client sees an unexpected EOF; a stream simply stops.
func (b body) truncate(w http.ResponseWriter) {
	var all []byte
	for _, c := range b.chunks {
		all = append(all, c...)
	}
	cut := len(all) / 2
	if b.stream && len(b.chunks) > 1 {
		cut = len(b.chunks[0]) // the first whole event or line, nothing after it
	}
	conn, rw, err := hijack(w)
	if err != nil {
		return
	}
	defer func() { _ = conn.Close() }() // an injected fault: the client may be gone, which is the point
	_, _ = fmt.Fprintf(rw, "HTTP/1.1 200 OK\r\nContent-Type: %s\r\nConnection: close\r\n", b.contentType)
	if !b.stream {
		_, _ = fmt.Fprintf(rw, "Content-Length: %d\r\n", len(all))
	}
	_, _ = rw.WriteString("\r\n")
	_, _ = rw.Write(all[:cut])
	_ = rw.Flush()
}

// drop closes the connection without a response.
func drop(w http.ResponseWriter) {
	conn, _, err := hijack(w)
	if err != nil {
		return
	}
	_ = conn.Close()
}

type closer interface{ Close() error }

func hijack(w http.ResponseWriter) (closer, *bufio.ReadWriter, error) {
	hj, ok := w.(http.Hijacker)
	if !ok {
		http.Error(w, "fakellm: cannot hijack this connection", http.StatusInternalServerError)
		return nil, nil, fmt.Errorf("not a hijacker")
	}
	conn, rw, err := hj.Hijack()
	if err != nil {
		return nil, nil, err
	}
	return conn, rw, nil
}

// play answers with reply: the fault it scripts, or the body render makes of it. fail
// writes the API's error body; malformedStream and malformedPlain are what a broken
// server sends in place of a streamed and a plain answer.
func play(w http.ResponseWriter, reply Reply, stream bool, render func() body, fail func(http.ResponseWriter, int, string), malformedStream, malformedPlain string) {
	switch reply.Fault {
	case FaultStatus:
		if reply.RetryAfter != "" {
			w.Header().Set("Retry-After", reply.RetryAfter)
		}
		fail(w, statusCode(reply), statusMessage(reply))
	case FaultDrop:
		drop(w)
	case FaultMalformed:
		b := render()
		b.chunks = [][]byte{[]byte(malformedPlain)}
		if stream {
			b.chunks = [][]byte{[]byte(malformedStream)}
		}
		b.write(w)
	case FaultTruncate:
		render().truncate(w)
	default:
		render().write(w)
	}
}

// statusCode is a status fault's code, 500 by default.
func statusCode(r Reply) int {
	if r.Status == 0 {
		return http.StatusInternalServerError
	}
	return r.Status
}

func statusMessage(r Reply) string {
	if r.Message != "" {
		return r.Message
	}
	return fmt.Sprintf("fakellm: scripted %d", statusCode(r))
}
