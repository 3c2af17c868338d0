// Package toolcache remembers each provider's rendering of a tool list. Rendering a
// schema costs a JSON round trip per tool, every step, for a list that does not change
// during a run; with a zero-latency model it was a third of the provider's time.
package toolcache

import (
	"strconv"
	"strings"
	"sync"
	"unsafe"

	"github.com/agentrunner/runner/tools"
)

// maxEntries bounds the cache; parallel scenarios rarely offer more distinct tool lists.
const maxEntries = 64

// Cache maps tool lists to their rendering. It is safe for concurrent use.
type Cache[T any] struct {
	mu      sync.Mutex
	entries map[string]entry[T]
}

type entry[T any] struct {
	// specs keeps the schemas (and free-form grammars) alive, so their addresses in the
	// key cannot be reused by others while the entry exists.
	specs []tools.Spec
	value T
}

// Get returns render(specs), computed once per distinct list. Lists are the same when
// they hold the same names, descriptions and *Schema pointers in the same order: tools
// hand out one schema for their lifetime, so pointer identity stands for content.
func (c *Cache[T]) Get(specs []tools.Spec, render func([]tools.Spec) (T, error)) (T, error) {
	key := keyOf(specs)
	c.mu.Lock()
	e, ok := c.entries[key]
	c.mu.Unlock()
	if ok && sameDescriptions(e.specs, specs) {
		return e.value, nil
	}
	v, err := render(specs)
	if err != nil {
		return v, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.entries == nil || len(c.entries) >= maxEntries {
		c.entries = map[string]entry[T]{}
	}
	c.entries[key] = entry[T]{specs: append([]tools.Spec(nil), specs...), value: v}
	return v, nil
}

func keyOf(specs []tools.Spec) string {
	var b strings.Builder
	for _, s := range specs {
		b.WriteString(s.Name)
		b.WriteByte(0)
		b.WriteString(strconv.FormatUint(uint64(uintptr(unsafe.Pointer(s.Parameters))), 36))
		b.WriteByte(0)
		if s.Freeform != nil { // an external agent's free-form tool renders differently
			b.WriteString(strconv.FormatUint(uint64(uintptr(unsafe.Pointer(s.Freeform))), 36))
			b.WriteByte(0)
		}
	}
	return b.String()
}

func sameDescriptions(a, b []tools.Spec) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Description != b[i].Description {
			return false
		}
	}
	return true
}
