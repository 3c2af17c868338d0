package search

import (
	"testing"

	"gotest.tools/v3/assert"
)

func TestResultLogBlocks(t *testing.T) {
	var l resultLog
	assert.Equal(t, l.grow(3), 0)
	assert.Equal(t, l.grow(2*resultBlock), 3)
	assert.Equal(t, len(l.blocks), 3)
	l.at(resultBlock + 5).searched = true
	p := l.at(resultBlock + 5)
	l.grow(resultBlock) // earlier results stay where they are
	assert.Assert(t, p == l.at(resultBlock+5) && p.searched)
	assert.Equal(t, l.n, 3+3*resultBlock)
}
