package search

import (
	"bytes"
	"context"
	"io"
	"math"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"unicode/utf8"

	"github.com/agentrunner/runner/tools"
)

// grepTree searches a directory. The walker emits files in path order and numbers them; a
// small pool of workers (one per CPU) reads and searches them in parallel. Results are
// kept by number, and once the files numbered 0..k are all done and hold more than max
// matches, nothing after k can be shown: the walk stops and later files are skipped. The
// result is thus exactly what a sequential search would give, however the work interleaves.
func grepTree(ctx context.Context, ws *tools.Workspace, plan *grepPlan) (grepSummary, *tools.Error) {
	w := &walker{ws: ws, maxDepth: walkDepth, cutReported: true, fileRefs: true}
	if plan.glob != nil {
		w.keep = func(rel, name string) bool { return plan.glob.match(relBelow(plan.target, rel), name) }
	}
	run := &grepRun{plan: plan, w: w}
	run.cutoff.Store(math.MaxInt64)

	type job struct {
		idx int
		f   fileRef
	}
	jobs := make(chan job, 512)
	var walkErr error
	go func() {
		defer close(jobs)
		walkErr = w.walk(ctx, plan.target, ancestorIgnores(ws, plan.target), func(f fileRef) bool {
			run.mu.Lock()
			idx := len(run.results)
			run.results = append(run.results, fileResult{})
			run.mu.Unlock()
			select {
			case jobs <- job{idx, f}:
				return true
			case <-ctx.Done():
				return false
			}
		})
	}()

	var wg sync.WaitGroup
	for range runtime.GOMAXPROCS(0) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var buf []byte
			for j := range jobs {
				var res fileResult
				if int64(j.idx) <= run.cutoff.Load() && ctx.Err() == nil {
					res, buf = run.search(ws, j.f, buf)
				}
				w.done(j.f)
				run.record(j.idx, res)
			}
		}()
	}
	wg.Wait()
	w.finish()
	if walkErr != nil && ctx.Err() == nil {
		return grepSummary{}, tools.FileError(walkErr, plan.target)
	}
	sum := run.summary()
	sum.depthCut = w.depthCut.Load()
	return sum, nil
}

// fileResult is what one file contributed.
type fileResult struct {
	lines    []string // formatted matches, at most max+1
	searched bool     // read and found to be text
	done     bool
}

// grepRun is the shared state of one grepTree.
type grepRun struct {
	plan *grepPlan
	w    *walker

	mu      sync.Mutex
	results []fileResult // by walk order
	prefix  int          // results[:prefix] are done and counted
	total   int          // matches in results[:prefix]
	cutoff  atomic.Int64 // last file whose matches can be shown
}

// search reads and searches one file; buf is the worker's reusable read buffer.
func (r *grepRun) search(ws *tools.Workspace, f fileRef, buf []byte) (fileResult, []byte) {
	var fh io.ReadCloser
	var err error
	o := readOpts{limit: maxGrepFileBytes, textOnly: true}
	if f.link {
		fh, err = ws.Root().Open(f.rel())
	} else {
		fh, err = f.dir.h.openFile(f.name)
		o.shortEOF = fileShortEOF
	}
	if err != nil {
		return fileResult{}, buf
	}
	lines, data, err := r.plan.m.scan(fh, f.dir.rel, f.name, buf, o, r.plan.max+1)
	_ = fh.Close()
	if cap(data) <= 4<<20 {
		buf = data[:0] // keep a grown buffer, unless one huge line would pin it
	}
	if err != nil {
		return fileResult{}, buf
	}
	return fileResult{searched: true, lines: lines}, buf
}

// record stores a file's result and advances the done prefix, cutting the search off
// once the prefix holds more matches than can be shown.
func (r *grepRun) record(idx int, res fileResult) {
	res.done = true
	r.mu.Lock()
	defer r.mu.Unlock()
	r.results[idx] = res
	for r.prefix < len(r.results) && r.results[r.prefix].done && r.cutoff.Load() == math.MaxInt64 {
		r.total += len(r.results[r.prefix].lines)
		if r.total > r.plan.max {
			r.cutoff.Store(int64(r.prefix))
			r.w.stop()
		}
		r.prefix++
	}
}

func (r *grepRun) summary() grepSummary {
	var s grepSummary
	end := len(r.results)
	if c := r.cutoff.Load(); c != math.MaxInt64 {
		end = int(c) + 1
		s.truncated = true
	}
	for _, res := range r.results[:end] {
		if res.searched {
			s.searched++
		}
		if len(res.lines) > 0 && len(s.lines) < r.plan.max {
			s.matched++
			s.lines = append(s.lines, res.lines[:min(len(res.lines), r.plan.max-len(s.lines))]...)
		}
	}
	return s
}

// isBinary reports a NUL byte near the start of data.
func isBinary(data []byte) bool {
	return bytes.IndexByte(data[:min(len(data), binaryProbe)], 0) >= 0
}

// formatMatch renders a match in file name of directory dir as "path:line: text".
func formatMatch(dir, name string, m lineMatch) string {
	line, text := strconv.Itoa(m.line), clipLine(m.text, m.col)
	if dir == "." {
		return name + ":" + line + ": " + text
	}
	return dir + "/" + name + ":" + line + ": " + text
}

// clipLine returns text as valid UTF-8, cut to about maxLineBytes around col when longer.
func clipLine(text []byte, col int) string {
	start, end := 0, len(text)
	if len(text) > maxLineBytes {
		start = max(0, col-maxLineBytes/3)
		end = min(len(text), start+maxLineBytes)
		start = max(0, end-maxLineBytes)
		for start > 0 && !utf8.RuneStart(text[start]) {
			start++
		}
		for end < len(text) && !utf8.RuneStart(text[end]) {
			end--
		}
	}
	s := strings.ToValidUTF8(string(text[start:end]), "\uFFFD")
	if start > 0 {
		s = "…" + s
	}
	if end < len(text) {
		s += "…"
	}
	return s
}
