package task

import (
	"fmt"
	"sort"
	"strings"
)

// suggest returns a hint for a misspelt name: "; did you mean "x"?" when one known name is
// close, otherwise the list of known names under the given label.
func suggest(name string, known []string, label string) string {
	if best := closest(name, known); best != "" {
		return fmt.Sprintf("; did you mean %q?", best)
	}
	return listing(known, label)
}

// closest returns the known name within typo distance of name, or "".
func closest(name string, known []string) string {
	best, bestDist := "", 0
	for _, k := range known {
		dist := levenshtein(strings.ToLower(name), strings.ToLower(k))
		if best == "" || dist < bestDist {
			best, bestDist = k, dist
		}
	}
	if best != "" && bestDist <= maxTypo(name) {
		return best
	}
	return ""
}

// hintAndList renders "; did you mean "x"? Label: a, b" or "; label: a, b": the
// suggestion when there is one, and the full list either way.
func hintAndList(name string, known []string, label string) string {
	best := closest(name, known)
	if best == "" {
		return listing(known, label)
	}
	list := listing(known, strings.ToUpper(label[:1])+label[1:])
	if list != "" {
		list = " " + strings.TrimPrefix(list, "; ")
	}
	return fmt.Sprintf("; did you mean %q?%s", best, list)
}

// listing renders "; label: a, b, c" with the names sorted, or "" for none.
func listing(known []string, label string) string {
	if len(known) == 0 {
		return ""
	}
	sorted := append([]string(nil), known...)
	sort.Strings(sorted)
	return fmt.Sprintf("; %s: %s", label, strings.Join(sorted, ", "))
}

// maxTypo is how many edits still count as a typo: short names allow fewer.
func maxTypo(name string) int {
	switch {
	case len(name) <= 3:
		return 1
	case len(name) <= 8:
		return 2
	default:
		return 3
	}
}

func levenshtein(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(rb)]
}

// Closest returns the known name within typo distance of name, or "": the "did you mean"
// of task keys, for the command line's commands, flags and names too.
func Closest(name string, known []string) string { return closest(name, known) }
