package exec

import (
	"bytes"
	"os"
	"runtime"
	"strconv"
	"strings"
)

// stuck reads what the processes under pid are doing (see Stuck): the leaves of its
// process tree, found by each process's parent in /proc/N/stat, so processes in a
// sandbox's own PID namespace (bwrap) are found by their host pids too.
func stuck(pid int) Stuck {
	s := Stuck{CPUs: runtime.NumCPU()}
	if b, err := os.ReadFile("/proc/loadavg"); err == nil {
		if f := strings.Fields(string(b)); len(f) > 0 {
			s.Load, _ = strconv.ParseFloat(f[0], 64)
		}
	}
	children := map[int][]int{}
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return s
	}
	for _, e := range entries {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if ppid := parentOf(p); ppid > 0 {
			children[ppid] = append(children[ppid], p)
		}
	}
	var leaves [][]string
	queue := []int{pid}
	for n := 0; len(queue) > 0 && n < 10000; n++ {
		p := queue[0]
		queue = queue[1:]
		kids := children[p]
		if len(kids) == 0 && p != pid {
			if argv := cmdline(p); len(argv) > 0 {
				leaves = append(leaves, argv)
			}
		}
		queue = append(queue, kids...)
	}
	s.Doing = describeAll(leaves)
	return s
}

// parentOf is p's parent pid from /proc/p/stat (0 when it cannot be read): the field
// after the command name, which is in parentheses and may hold any character.
func parentOf(p int) int {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(p) + "/stat")
	if err != nil {
		return 0
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 2 {
		return 0
	}
	ppid, _ := strconv.Atoi(f[1])
	return ppid
}

// cmdline is p's argv (nil for a kernel thread or a process gone meanwhile).
func cmdline(p int) []string {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(p) + "/cmdline")
	if err != nil || len(b) == 0 {
		return nil
	}
	return strings.Split(strings.TrimRight(string(b), "\x00"), "\x00")
}
