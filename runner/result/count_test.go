package result

import (
	"math"
	"testing"

	"gotest.tools/v3/assert"
)

// TestAddCountNeitherLowersNorWraps: a negative count adds nothing, and a sum past
// math.MaxInt stays there instead of wrapping to a negative total.
func TestAddCountNeitherLowersNorWraps(t *testing.T) {
	assert.Equal(t, AddCount(1_000_000, -1_000_000), 1_000_000)
	assert.Equal(t, AddCount(-5, -5), 0)
	assert.Equal(t, AddCount(math.MaxInt, 1), math.MaxInt)
	assert.Equal(t, AddCount(math.MaxInt/2+1, math.MaxInt/2+1), math.MaxInt)
	u := Usage{PromptTokens: math.MaxInt - 1}
	u.Add(Usage{PromptTokens: 10, CompletionTokens: -3, EvalTime: -1})
	assert.Equal(t, u, Usage{PromptTokens: math.MaxInt})
}
