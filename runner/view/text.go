package view

import (
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/agentrunner/runner/runner/report/plaintext"
	"github.com/agentrunner/runner/runner/result"
)

// Text is a piece of agent- or task-controlled text prepared for a page: cleaned, cut
// to a display limit, with its size for the folded summary.
type Text struct {
	S     string
	Bytes int
	Lines int
	// Cut is how many bytes the page leaves out (0: all shown).
	Cut int
}

// Long reports whether the text is folded by default.
func (t Text) Long() bool { return t.Lines > foldLines || t.Bytes > foldBytes }

// Size is "12 lines, 3.4 KB".
func (t Text) Size() string {
	if t.Lines == 1 {
		return "1 line, " + Bytes(t.Bytes)
	}
	return fmt.Sprintf("%d lines, %s", t.Lines, Bytes(t.Bytes))
}

const (
	foldLines = 12
	foldBytes = 1500
)

// NewText prepares s, keeping at most limit bytes of it (at a rune boundary).
func NewText(s string, limit int) Text {
	t := Text{Bytes: len(s), Lines: strings.Count(s, "\n") + 1}
	if strings.HasSuffix(s, "\n") {
		t.Lines--
	}
	if s == "" {
		t.Lines = 0
	}
	if limit > 0 && len(s) > limit {
		cut := limit
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		t.Cut = len(s) - cut
		s = s[:cut]
	}
	t.S = plaintext.Clean(s)
	return t
}

// Short is s on one line, at most n runes, with an ellipsis when cut.
func Short(s string, n int) string {
	s = strings.Join(strings.Fields(plaintext.Clean(s)), " ")
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}

// Bytes is a size for people: 512 B, 3.4 KB, 10.0 MB.
func Bytes(n int) string {
	switch {
	case n < 1000:
		return fmt.Sprintf("%d B", n)
	case n < 1000_000:
		return fmt.Sprintf("%.1f KB", float64(n)/1000)
	default:
		return fmt.Sprintf("%.1f MB", float64(n)/1000_000)
	}
}

// TimeBreakdown is a scenario's duration with its parts: "12.0s (setup 1.1s, model 2.5s,
// tools 3.3s, verification 5.1s)".
func TimeBreakdown(s result.Scenario) string {
	parts := make([]string, 0, 5)
	for _, p := range s.TimeParts() {
		parts = append(parts, p.Name+" "+Duration(p.Time))
	}
	return Duration(s.Duration) + " (" + strings.Join(parts, ", ") + ")"
}

// Duration is d rounded for reading: 850ms, 12.3s, 4m05s.
func Duration(m result.Millis) string {
	// Rounded, not truncated (7.97 ms is 8ms), each unit before the next is chosen, so
	// 999.7 ms reads 1.0s rather than 1000ms.
	d := m.Duration()
	if d <= 0 {
		return "0s"
	}
	if r := d.Round(time.Millisecond); r < time.Second {
		return fmt.Sprintf("%dms", r.Milliseconds())
	}
	if r := d.Round(100 * time.Millisecond); r < time.Minute {
		return fmt.Sprintf("%.1fs", r.Seconds())
	}
	d = d.Round(time.Second)
	return fmt.Sprintf("%dm%02ds", int(d.Minutes()), int(d.Seconds())%60)
}
