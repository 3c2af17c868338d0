//go:build !unix

package door

// nonBlocking: these systems have no FIFOs in the file system to wait on.
const nonBlocking = 0
