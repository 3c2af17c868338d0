// Package msgcache remembers the JSON encoding of each message of a conversation, so a
// provider re-sends a conversation of n messages by copying n encodings instead of
// converting and encoding every one again. The loop's conversation only grows, and
// without the cache each step cost O(whole conversation) in reflection-driven encoding:
// at step 200 most of a step's time against a zero-latency server.
package msgcache

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/agentrunner/runner/runner/model"
)

// maxIdle bounds how many conversations a Cache keeps. The runner opens one model per
// scenario, so one conversation is the rule; a model shared by parallel callers keeps a
// few, and the least recently used is dropped first.
const maxIdle = 8

// Encoder turns one message into the JSON the provider sends for it. A Cache must always
// be used with the same Encoder: the encodings it hands back are Encoder's output.
type Encoder func(msg *model.Message) ([]byte, error)

// Cache holds the encodings of recent conversations. The zero value is ready to use and
// it is safe for concurrent use.
type Cache struct {
	mu   sync.Mutex
	idle []*conv // least recently used first
}

// conv is one conversation: the messages encoded so far and their encodings. A conv is
// used by one request at a time (take removes it from the idle list, put returns it), so
// its slices need no lock; the encodings themselves are never changed once made, so a
// prefix can be shared between convs.
type conv struct {
	src  []model.Message // what each encoding was made from; Arguments are private copies
	enc  [][]byte
	size int // total length of enc
}

// Splice returns body with its messages filled in. body is a chat request encoded with
// an empty messages array, as both client libraries' request types encode it: it starts
// {"model":"NAME","messages":[] (the fields' declaration order). The array is written
// straight into the new body, so a step copies each cached encoding once.
func (c *Cache) Splice(body []byte, msgs []model.Message, enc Encoder) ([]byte, error) {
	at, err := emptyMessagesAt(body)
	if err != nil {
		return nil, err
	}
	cv, err := c.encode(msgs, enc)
	if err != nil {
		return nil, err
	}
	out := make([]byte, 0, len(body)+cv.size+len(cv.enc))
	out = append(out, body[:at]...)
	out = append(out, '[')
	for i, b := range cv.enc {
		if i > 0 {
			out = append(out, ',')
		}
		out = append(out, b...)
	}
	out = append(out, ']')
	out = append(out, body[at+len("[]"):]...)
	c.put(cv)
	return out, nil
}

// ErrShape reports a request body whose messages are not where Splice expects them: the
// library changed how its request type encodes. Callers fall back to encoding it whole.
var ErrShape = errors.New(`request body does not start with {"model":...,"messages":[]`)

// emptyMessagesAt returns the offset of the "[]" of a top-level "messages" field that
// directly follows the first field, "model".
func emptyMessagesAt(body []byte) (int, error) {
	const head, field = `{"model":"`, `,"messages":[]`
	if !bytes.HasPrefix(body, []byte(head)) {
		return 0, ErrShape
	}
	// Skip the model name: a JSON string, in which a quote is always escaped.
	i := len(head)
	for ; i < len(body) && body[i] != '"'; i++ {
		if body[i] == '\\' {
			i++
		}
	}
	if i >= len(body) || !bytes.HasPrefix(body[i+1:], []byte(field)) {
		return 0, ErrShape
	}
	return i + 1 + len(field) - len("[]"), nil
}

// encode returns a conv whose encodings are those of msgs, taken out of the idle list;
// the caller must put it back.
func (c *Cache) encode(msgs []model.Message, enc Encoder) (*conv, error) {
	cv := c.take(msgs)
	for i := len(cv.enc); i < len(msgs); i++ {
		b, err := enc(&msgs[i])
		if err != nil {
			c.put(cv) // what it holds so far is still right
			return nil, fmt.Errorf("encode message %d: %w", i+1, err)
		}
		cv.src = append(cv.src, snapshot(msgs[i]))
		cv.enc = append(cv.enc, b)
		cv.size += len(b)
	}
	return cv, nil
}

// take finds the idle conversation that msgs continue. A conversation that msgs extend
// (or repeat) is taken over whole; one that only shares a prefix with them is left for
// its own caller and its prefix copied, so two conversations that start alike do not
// keep evicting each other's encodings.
func (c *Cache) take(msgs []model.Message) *conv {
	c.mu.Lock()
	defer c.mu.Unlock()
	best, bestN := -1, 0
	for i := len(c.idle) - 1; i >= 0; i-- { // most recent first
		n := matching(c.idle[i].src, msgs)
		if n == len(c.idle[i].src) && n > 0 {
			cv := c.idle[i]
			c.idle = slices.Delete(c.idle, i, i+1)
			return cv
		}
		if n > bestN {
			best, bestN = i, n
		}
	}
	cv := &conv{}
	if best >= 0 {
		from := c.idle[best]
		cv.src = slices.Clone(from.src[:bestN])
		cv.enc = slices.Clone(from.enc[:bestN])
		for _, b := range cv.enc {
			cv.size += len(b)
		}
	}
	return cv
}

func (c *Cache) put(cv *conv) {
	if len(cv.enc) == 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.idle) >= maxIdle {
		c.idle = slices.Delete(c.idle, 0, 1)
	}
	c.idle = append(c.idle, cv)
}

// matching returns how many leading messages of a and b are equal. Strings that share
// memory compare in constant time, so an unchanged conversation costs little to check.
func matching(a, b []model.Message) int {
	n := min(len(a), len(b))
	for i := range n {
		if !equal(&a[i], &b[i]) {
			return i
		}
	}
	return n
}

func equal(a, b *model.Message) bool {
	if a.Role != b.Role || a.Content != b.Content || a.ToolCallID != b.ToolCallID ||
		a.ToolName != b.ToolName || len(a.ToolCalls) != len(b.ToolCalls) {
		return false
	}
	for i := range a.ToolCalls {
		x, y := &a.ToolCalls[i], &b.ToolCalls[i]
		if x.ID != y.ID || x.Name != y.Name || !bytes.Equal(x.Arguments, y.Arguments) {
			return false
		}
	}
	return true
}

// snapshot copies what a caller could change in place later: the tool calls and their
// argument bytes. Strings are immutable and are shared.
func snapshot(m model.Message) model.Message {
	if len(m.ToolCalls) > 0 {
		calls := make([]model.ToolCall, len(m.ToolCalls))
		for i, tc := range m.ToolCalls {
			tc.Arguments = bytes.Clone(tc.Arguments)
			calls[i] = tc
		}
		m.ToolCalls = calls
	}
	return m
}
