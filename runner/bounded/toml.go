package bounded

// TOML checks a TOML document against lim (size, depth, values) before a parser sees it:
// arrays and inline tables nest; a table header ([a.b], [[a]]) first on its line outside
// any value does not; strings (basic, literal and their multi-line forms) and comments
// are skipped. BurntSushi/toml took 56 s and 18 GB on 20,000 nested `{a=` (60 KB).
func TOML(path string, data []byte, lim Limits) error {
	if err := CheckSize(path, data, lim); err != nil {
		return err
	}
	s := &yamlScan{counter: newCounter(path, data, lim)} // for its line and blank helpers
	open, lineFirst := 0, true
	for !s.done() {
		c := s.data[s.pos]
		switch {
		case c == '\n' || c == '\r':
			s.lineBreak()
			lineFirst = true
			continue
		case isBlank(c):
			s.pos++
			continue
		case c == '#':
			for !s.isEOL(s.pos) {
				s.pos++
			}
			continue
		case c == '[' && open == 0 && lineFirst: // a table header
			s.node(s.pos)
			for !s.isEOL(s.pos) && s.data[s.pos] != '#' {
				if q := s.data[s.pos]; q == '"' || q == '\'' {
					s.tomlString()
					continue
				}
				s.pos++
			}
		case c == '[' || c == '{':
			open++
			s.node(s.pos)
			s.nest(open)
			s.pos++
		case c == ']' || c == '}':
			open = max(open-1, 0)
			s.pos++
		case c == '"' || c == '\'':
			s.node(s.pos)
			s.tomlString()
		case c == '=' || c == ',':
			s.node(s.pos)
			s.pos++
		default:
			s.pos++
		}
		lineFirst = false
	}
	return s.result()
}

// tomlString moves past the string at c.pos: "basic" (with \ escapes), 'literal', and the
// multi-line forms (three quotes of either kind), across lines.
func (s *yamlScan) tomlString() {
	q := s.data[s.pos]
	multi := s.pos+2 < len(s.data) && s.data[s.pos+1] == q && s.data[s.pos+2] == q
	if multi {
		s.pos += 3
	} else {
		s.pos++
	}
	for s.pos < len(s.data) {
		c := s.data[s.pos]
		switch {
		case c == '\n' || c == '\r':
			s.lineBreak()
			if !multi {
				return // a one-line string does not continue: the parser says so
			}
			continue
		case c == '\\' && q == '"':
			s.pos++
			if !s.lineBreak() && s.pos < len(s.data) {
				s.pos++
			}
			continue
		case c == q && !multi:
			s.pos++
			return
		case c == q && s.pos+2 < len(s.data) && s.data[s.pos+1] == q && s.data[s.pos+2] == q:
			s.pos += 3
			for s.pos < len(s.data) && s.data[s.pos] == q { // up to two quotes may end the content
				s.pos++
			}
			return
		}
		s.pos++
	}
}
