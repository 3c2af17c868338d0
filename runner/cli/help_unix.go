//go:build unix

package cli

import "golang.org/x/sys/unix"

// terminalColumns is the width of the terminal on fd, or 0.
func terminalColumns(fd uintptr) int {
	ws, err := unix.IoctlGetWinsize(int(fd), unix.TIOCGWINSZ)
	if err != nil {
		return 0
	}
	return int(ws.Col)
}
