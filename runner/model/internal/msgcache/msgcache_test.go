package msgcache

import (
	"encoding/json"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"gotest.tools/v3/assert"

	"github.com/agentrunner/runner/runner/model"
)

// counting is an encoder that counts its calls.
type counting struct{ n atomic.Int64 }

func (c *counting) encode(m *model.Message) ([]byte, error) {
	c.n.Add(1)
	return json.Marshal(m)
}

// request is a chat request with msgs, encoded whole: what Splice must reproduce.
func request(t *testing.T, name string, msgs []model.Message) []byte {
	t.Helper()
	b, err := json.Marshal(struct {
		Model    string          `json:"model"`
		Messages []model.Message `json:"messages"`
		Stream   bool            `json:"stream"`
	}{name, msgs, true})
	assert.NilError(t, err)
	return b
}

func conversation(steps int) []model.Message {
	msgs := []model.Message{{Role: model.RoleSystem, Content: "sys <b>&"}, {Role: model.RoleUser, Content: "do it"}}
	for i := range steps {
		id := fmt.Sprintf("call_%d", i)
		msgs = append(msgs,
			model.Message{Role: model.RoleAssistant, ToolCalls: []model.ToolCall{{ID: id, Name: "read_file", Arguments: json.RawMessage(`{"path":"a.go"}`)}}},
			model.Message{Role: model.RoleTool, ToolCallID: id, Content: fmt.Sprintf("result %d ✓", i)})
	}
	return msgs
}

func TestSpliceReproducesTheWholeEncodingAndReusesMessages(t *testing.T) {
	var c Cache
	enc := &counting{}
	full := conversation(5)
	for n := 0; n <= len(full); n++ {
		msgs := full[:n]
		got, err := c.Splice(request(t, `we"ird\model`, []model.Message{}), msgs, enc.encode)
		assert.NilError(t, err)
		assert.Equal(t, string(got), string(request(t, `we"ird\model`, msgs)))
	}
	assert.Equal(t, enc.n.Load(), int64(len(full)), "each message is encoded once")
}

func TestEditedMessagesAreEncodedAgain(t *testing.T) {
	var c Cache
	enc := &counting{}
	msgs := conversation(2)
	empty := request(t, "m", []model.Message{})
	_, err := c.Splice(empty, msgs, enc.encode)
	assert.NilError(t, err)

	// Arguments changed in place, and a content replaced: both are seen.
	msgs[2].ToolCalls[0].Arguments[2] = 'P'
	msgs[5].Content = "changed"
	got, err := c.Splice(empty, msgs, enc.encode)
	assert.NilError(t, err)
	assert.Equal(t, string(got), string(request(t, "m", msgs)))
	assert.Equal(t, enc.n.Load(), int64(6+4), "messages 3 to 6 again")

	// A shorter conversation is a prefix: nothing to encode.
	got, err = c.Splice(empty, msgs[:3], enc.encode)
	assert.NilError(t, err)
	assert.Equal(t, string(got), string(request(t, "m", msgs[:3])))
	assert.Equal(t, enc.n.Load(), int64(10))
}

func TestConversationsThatStartAlikeKeepTheirOwnEncodings(t *testing.T) {
	var c Cache
	enc := &counting{}
	empty := request(t, "m", []model.Message{})
	a, b := conversation(3), conversation(3)
	b[4].Content = "b's own result"
	for range 3 {
		for _, msgs := range [][]model.Message{a, b} {
			got, err := c.Splice(empty, msgs, enc.encode)
			assert.NilError(t, err)
			assert.Equal(t, string(got), string(request(t, "m", msgs)))
		}
	}
	// a: 8 messages; b: its 4 from the point it differs; no more after the first round.
	assert.Equal(t, enc.n.Load(), int64(8+4))
}

func TestEncoderErrorsAndUnexpectedBodies(t *testing.T) {
	var c Cache
	_, err := c.Splice(request(t, "m", []model.Message{}), conversation(1), func(m *model.Message) ([]byte, error) {
		if m.Role == model.RoleTool {
			return nil, fmt.Errorf("no")
		}
		return json.Marshal(m)
	})
	assert.Error(t, err, "encode message 4: no")

	for _, body := range []string{
		`{"messages":[],"model":"m"}`,
		`{"model":"m","messages":null}`,
		`{"model":"m","messages":[{"role":"user"}]}`,
		`{"model":"m`,
		`{"model":"m\",\"messages\":[]"}`,
		``,
	} {
		_, err := c.Splice([]byte(body), nil, func(m *model.Message) ([]byte, error) { return json.Marshal(m) })
		assert.ErrorIs(t, err, ErrShape, body)
	}
}

func TestConcurrentConversations(t *testing.T) {
	var c Cache
	enc := &counting{}
	empty := request(t, "m", []model.Message{})
	var wg sync.WaitGroup
	for g := range 2 * maxIdle {
		wg.Go(func() {
			msgs := conversation(10)
			msgs[1].Content = fmt.Sprintf("task %d", g)
			for n := 2; n <= len(msgs); n += 2 {
				got, err := c.Splice(empty, msgs[:n], enc.encode)
				if err != nil || string(got) != string(request(t, "m", msgs[:n])) {
					t.Errorf("conversation %d at %d messages: %v\n%s", g, n, err, got)
					return
				}
			}
		})
	}
	wg.Wait()
	c.mu.Lock()
	defer c.mu.Unlock()
	assert.Assert(t, len(c.idle) <= maxIdle)
}
