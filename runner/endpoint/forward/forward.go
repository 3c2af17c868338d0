// Package forward is the endpoint's way into a sandbox with a network of its own (bwrap
// without network: true): runner re-executed inside it as
// os.Args = [exe, Arg, SOCKET, ADDR, program, argv...] listens on ADDR (127.0.0.1:PORT
// in the sandbox's own loopback), starts the agent program, and carries each connection
// to the Unix socket SOCKET, the endpoint's, bound into the sandbox read-only. It exits
// with the program's status; the sandbox's PID namespace ends whatever is left.
//
// It runs from this package's init, as the sandbox helper does (tools/exec/sandbox/
// internal/confine), so it imports only the standard library.
package forward

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"syscall"
)

// Arg is the hidden first argument that makes the runner the forwarder.
const Arg = "__runner-endpoint-forward"

// Failed is the exit status when the forwarder cannot start the program.
const Failed = 126

func init() {
	if len(os.Args) > 1 && os.Args[1] == Arg {
		os.Exit(Run(os.Args[2:]))
	}
}

// Argv is the command line that runs program (argv[0] first) behind a forwarder.
func Argv(self, socket, addr string, argv []string) []string {
	return append([]string{self, Arg, socket, addr}, argv...)
}

// Run is the forwarder: args are SOCKET, ADDR, program, argv... It returns the program's
// exit status (128+signal when a signal ended it).
func Run(args []string) int {
	if len(args) < 3 {
		fmt.Fprintln(os.Stderr, "runner endpoint forwarder: want SOCKET ADDR PROGRAM ARGV...")
		return Failed
	}
	socket, addr, path, argv := args[0], args[1], args[2], args[2:]
	l, err := net.Listen("tcp", addr)
	if err != nil {
		fmt.Fprintf(os.Stderr, "runner endpoint forwarder: %v\n", err)
		return Failed
	}
	go serve(l, socket)
	cmd := &exec.Cmd{Path: path, Args: argv, Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr, Env: os.Environ()}
	err = cmd.Run()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &exit):
		if ws, ok := exit.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return 128 + int(ws.Signal())
		}
		return exit.ExitCode()
	}
	fmt.Fprintf(os.Stderr, "runner endpoint forwarder: %v\n", err)
	return Failed
}

// serve carries every connection on l to the Unix socket.
func serve(l net.Listener, socket string) {
	for {
		c, err := l.Accept()
		if err != nil {
			return
		}
		go carry(c, socket)
	}
}

func carry(c net.Conn, socket string) {
	defer func() { _ = c.Close() }()
	u, err := net.Dial("unix", socket)
	if err != nil {
		return // the agent sees its connection closed: the endpoint is gone
	}
	defer func() { _ = u.Close() }()
	done := make(chan struct{}, 2)
	pipe := func(dst, src net.Conn) {
		_, _ = io.Copy(dst, src)
		if cw, ok := dst.(interface{ CloseWrite() error }); ok {
			_ = cw.CloseWrite()
		}
		done <- struct{}{}
	}
	go pipe(u, c)
	go pipe(c, u)
	<-done
	<-done
}
