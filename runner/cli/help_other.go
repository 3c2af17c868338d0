//go:build !unix

package cli

// terminalColumns is 0 where there is no TIOCGWINSZ: COLUMNS, else 80, is the width.
func terminalColumns(uintptr) int { return 0 }
