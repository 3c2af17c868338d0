package bounded

// JSON checks a JSON document, or JSON lines, against lim (size, depth, values) without
// decoding it. Go's decoder stops at 10,000 levels on its own; this stops far sooner,
// with the line and column, and bounds the values too.
func JSON(path string, data []byte, lim Limits) error {
	if err := CheckSize(path, data, lim); err != nil {
		return err
	}
	c := newCounter(path, data, lim)
	depth := 0
	for !c.done() {
		switch data[c.pos] {
		case '\n':
			c.newline()
			continue
		case '[', '{':
			depth++
			c.depth(depth, c.pos)
			c.node(c.pos)
		case ']', '}':
			depth = max(depth-1, 0)
		case ',', ':':
			c.node(c.pos)
		case '"':
			c.node(c.pos)
			c.skipDoubleQuoted()
			continue
		}
		c.pos++
	}
	return c.result()
}

// skipDoubleQuoted moves past the "..." string at c.pos (to the end of the data if it is
// not closed), keeping count of the lines it spans; `\` escapes the next byte.
func (c *counter) skipDoubleQuoted() {
	for c.pos++; c.pos < len(c.data); {
		switch c.data[c.pos] {
		case '\\':
			c.pos++
			if c.pos < len(c.data) && c.data[c.pos] == '\n' {
				c.newline()
				continue
			}
		case '"':
			c.pos++
			return
		case '\n':
			c.newline()
			continue
		}
		c.pos++
	}
}
