package exec

import (
	"fmt"
	"strings"
)

// OutputLimit is how much of a command's output a result keeps: the first and the last
// half. A build that floods the terminal must not flood the model's context or the
// runner's memory, and the end of a log (the failure) matters as much as its start.
const OutputLimit = 1 << 20

// capture is an io.Writer that keeps the head and the tail of an unbounded stream in at
// most limit bytes: the first limit/2 bytes in head, the most recent ones in a ring.
// Memory never exceeds limit whatever the stream's length.
type capture struct {
	limit int
	head  []byte // grows up to headCap
	ring  []byte // allocated once the head is full; len(ring) == limit-headCap
	start int    // index in ring of the oldest byte once the ring has wrapped
	fill  int    // bytes in ring
	total int64  // bytes written
}

func newCapture(limit int) *capture {
	return &capture{limit: limit}
}

func (c *capture) headCap() int { return c.limit / 2 }

// Write never fails: dropping the middle of the stream is the point.
func (c *capture) Write(p []byte) (int, error) {
	n := len(p)
	c.total += int64(n)
	if room := c.headCap() - len(c.head); room > 0 {
		take := min(room, len(p))
		c.growHead(take)
		c.head = append(c.head, p[:take]...)
		p = p[take:]
	}
	if len(p) == 0 {
		return n, nil
	}
	if c.ring == nil {
		c.ring = make([]byte, c.limit-c.headCap())
	}
	size := len(c.ring)
	if len(p) >= size { // only the last size bytes can survive
		copy(c.ring, p[len(p)-size:])
		c.start, c.fill = 0, size
		return n, nil
	}
	end := (c.start + c.fill) % size
	k := copy(c.ring[end:], p)
	copy(c.ring, p[k:])
	if c.fill+len(p) <= size {
		c.fill += len(p)
	} else {
		c.start = (c.start + c.fill + len(p)) % size
		c.fill = size
	}
	return n, nil
}

// growHead grows head geometrically but never past headCap, so that a short output costs
// little and a long one no more than headCap.
func (c *capture) growHead(extra int) {
	need := len(c.head) + extra
	if need <= cap(c.head) {
		return
	}
	newCap := max(2*cap(c.head), need, 4096)
	newCap = min(newCap, c.headCap())
	grown := make([]byte, len(c.head), newCap)
	copy(grown, c.head)
	c.head = grown
}

// Total is the number of bytes written.
func (c *capture) Total() int64 { return c.total }

// Dropped is the number of bytes left out of String.
func (c *capture) Dropped() int64 { return c.total - int64(len(c.head)) - int64(c.fill) }

// Kept is the number of bytes of output that String holds (the marker aside).
func (c *capture) Kept() int { return len(c.head) + c.fill }

// String returns the kept output, with a marker counting the dropped bytes between the
// head and the tail. Invalid UTF-8 (a rune cut at the seams, binary output) is replaced so
// that the text survives JSON encoding unchanged.
func (c *capture) String() string {
	var b strings.Builder
	dropped := c.Dropped()
	b.Grow(c.Kept() + 64)
	b.Write(c.head)
	if dropped > 0 {
		fmt.Fprintf(&b, "\n\n[... %d bytes of output omitted ...]\n\n", dropped)
	}
	tailStart := min(c.start+c.fill, len(c.ring))
	b.Write(c.ring[c.start:tailStart])
	b.Write(c.ring[:c.fill-(tailStart-c.start)])
	return strings.ToValidUTF8(b.String(), "\uFFFD")
}
