package model

import (
	"math"
	"testing"

	"gotest.tools/v3/assert"
)

// TestUsageAddClampsEachAnswer: +1,000,000 then -1,000,000 prompt tokens total 1,000,000;
// cached tokens count at most the prompt's; a huge count saturates the sum.
func TestUsageAddClampsEachAnswer(t *testing.T) {
	var u Usage
	u.Add(Usage{PromptTokens: 1_000_000, CompletionTokens: 10, EvalDuration: 5})
	u.Add(Usage{PromptTokens: -1_000_000, CompletionTokens: -10, CachedPromptTokens: -4, EvalDuration: -5, LoadDuration: -1})
	assert.Equal(t, u, Usage{PromptTokens: 1_000_000, CompletionTokens: 10, EvalDuration: 5})
	assert.Equal(t, Usage{PromptTokens: 10, CachedPromptTokens: 50}.Clamped().CachedPromptTokens, 10)
	u.Add(Usage{PromptTokens: math.MaxInt})
	u.Add(Usage{PromptTokens: math.MaxInt})
	assert.Equal(t, u.PromptTokens, math.MaxInt)
}
