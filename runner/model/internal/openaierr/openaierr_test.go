package openaierr

import (
	"context"
	"errors"
	"fmt"
	"testing"

	goopenai "github.com/sashabaranov/go-openai"
	"gotest.tools/v3/assert"

	"github.com/agentrunner/runner/runner/model"
	"github.com/agentrunner/runner/runner/model/internal/wire"
)

func TestClassify(t *testing.T) {
	_, capture := wire.WithCapture(context.Background()) // no status seen
	decode := errors.New("unexpected end of JSON input")
	cases := []struct {
		name      string
		err       error
		status    int
		message   string
		temporary bool
	}{
		{"an error object", &goopenai.APIError{HTTPStatusCode: 429, Message: "slow down"}, 429, "slow down", true},
		{"a body that is not an error object", &goopenai.RequestError{HTTPStatusCode: 502, Err: decode, Body: []byte(" <html>bad gateway</html>\n")}, 502, "<html>bad gateway</html>", true},
		{"an empty body", &goopenai.RequestError{HTTPStatusCode: 400, Err: decode}, 400, "", false},
		{"an error object in a 200 stream", fmt.Errorf("stream: %w", &goopenai.APIError{Message: "overloaded"}), 0, "overloaded", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := Classify("openai", "host", tc.err, capture)
			var pe *model.ProviderError
			assert.Assert(t, errors.As(err, &pe), "%T %v", err, err)
			assert.Equal(t, pe.StatusCode, tc.status)
			assert.Equal(t, pe.Message, tc.message)
			assert.Equal(t, pe.Temporary, tc.temporary)
			assert.Equal(t, pe.Provider, "openai")
			assert.Assert(t, errors.Is(err, tc.err))
		})
	}
	assert.NilError(t, Classify("openai", "host", errors.New("dial tcp: refused"), capture)) // not go-openai's: the frame's
}
