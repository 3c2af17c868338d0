//go:build unix

package door

import "syscall"

// nonBlocking keeps an open from waiting for a FIFO's writer (or a device): a FIFO that
// takes the place of a file between its lstat and its open is then refused, not waited on.
const nonBlocking = syscall.O_NONBLOCK
