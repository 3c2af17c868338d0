package web

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/agentrunner/runner/tools"
)

// readBody reads at most limit bytes and reports whether more was left unread.
func readBody(r io.Reader, limit int64) ([]byte, bool, error) {
	data, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return nil, false, fmt.Errorf("read response body: %w", err)
	}
	if int64(len(data)) > limit {
		return data[:limit], true, nil
	}
	return data, false, nil
}

// requestError maps a request failure to a tool error: a guard refusal is DENIED, a
// deadline TIMEOUT (timeout, when known, goes in the message), anything else
// NETWORK_ERROR.
func requestError(err error, target string, timeout time.Duration) *tools.Error {
	var blocked *blockedError
	if errors.As(err, &blocked) {
		return tools.Errorf(tools.CodeDenied, "Fetch a public address instead; local metadata services and disallowed hosts cannot be reached.",
			"Request to '%s' refused: %s", target, blocked.Error())
	}
	var nerr net.Error
	if errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &nerr) && nerr.Timeout()) {
		msg := "Request to '%s' timed out"
		if timeout > 0 {
			msg += fmt.Sprintf(" after %s", timeout)
		}
		return tools.Errorf(tools.CodeTimeout, "Retry with a larger timeout_seconds (at most 60), or try another source.", msg, target)
	}
	if errors.Is(err, context.Canceled) {
		return tools.Errorf(tools.CodeNetworkError, "", "Request to '%s' was cancelled", target)
	}
	return tools.Errorf(tools.CodeNetworkError, "Check the URL and that the server is reachable.",
		"Request to '%s' failed: %v", target, err)
}

// bodyExcerpt is the start of an error response, on one line, for the model to read.
func bodyExcerpt(data []byte) string {
	const limit = 500
	s := strings.ToValidUTF8(string(data), "")
	s = strings.Join(strings.Fields(s), " ")
	if s == "" {
		return "(empty body)"
	}
	if len(s) > limit {
		cut := limit
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut] + "..."
	}
	return s
}

// sizeText spells a byte count for people: 1 MB, 512 KB, 300 bytes.
func sizeText(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}
