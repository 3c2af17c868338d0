package toolcache

import (
	"errors"
	"testing"

	"gotest.tools/v3/assert"

	"github.com/agentrunner/runner/tools"
)

func TestGetRendersOncePerList(t *testing.T) {
	a := tools.Spec{Name: "a", Description: "A.", Parameters: tools.Object(nil)}
	b := tools.Spec{Name: "b", Description: "B.", Parameters: tools.Object(nil)}
	renders := 0
	render := func(specs []tools.Spec) (int, error) { renders++; return len(specs) * 10, nil }
	var c Cache[int]

	for range 3 {
		v, err := c.Get([]tools.Spec{a, b}, render)
		assert.NilError(t, err)
		assert.Equal(t, v, 20)
	}
	assert.Equal(t, renders, 1)

	v, _ := c.Get([]tools.Spec{a}, render) // another list
	assert.Equal(t, v, 10)
	assert.Equal(t, renders, 2)

	a2 := a
	a2.Description = "Changed."
	_, _ = c.Get([]tools.Spec{a2, b}, render) // same schemas, new description
	assert.Equal(t, renders, 3)

	a3 := a
	a3.Parameters = tools.Object(nil) // an equal but distinct schema
	_, _ = c.Get([]tools.Spec{a3, b}, render)
	assert.Equal(t, renders, 4)

	_, err := c.Get([]tools.Spec{b, a}, func([]tools.Spec) (int, error) { return 0, errors.New("no") })
	assert.Error(t, err, "no")
	_, _ = c.Get([]tools.Spec{b, a}, render) // errors are not cached
	assert.Equal(t, renders, 5)
}

func TestCacheIsBounded(t *testing.T) {
	var c Cache[int]
	render := func([]tools.Spec) (int, error) { return 1, nil }
	for range maxEntries * 3 {
		_, _ = c.Get([]tools.Spec{{Name: "x", Parameters: tools.Object(nil)}}, render)
	}
	assert.Assert(t, len(c.entries) <= maxEntries)
}
