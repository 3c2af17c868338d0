package search

import (
	"bytes"
	"context"
	"io"
	"math"
	"runtime"
	"slices"
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
//
// Files go to the workers in batches of consecutive numbers, handed over when full or
// when the walker is about to wait for a directory listing, so that the channel and the
// results' lock are taken once per batch rather than once per file.
func grepTree(ctx context.Context, ws *tools.Workspace, plan *grepPlan) (grepSummary, *tools.Error) {
	w := &walker{ws: ws, maxDepth: walkDepth, cutReported: true, fileRefs: true}
	if plan.glob != nil {
		w.keep = func(rel, name string) bool { return plan.glob.match(relBelow(plan.target, rel), name) }
	}
	run := &grepRun{plan: plan, w: w}
	run.cutoff.Store(math.MaxInt64)

	jobs := make(chan grepJob, 64)
	spare := make(chan []fileRef, cap(jobs)+runtime.GOMAXPROCS(0)) // batches to reuse
	var walkErr error
	go func() {
		defer close(jobs)
		walkErr = run.feed(ctx, jobs, spare)
	}()
	var wg sync.WaitGroup
	for range runtime.GOMAXPROCS(0) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			run.work(ctx, jobs, spare)
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

// feed walks the tree and sends its files to the workers in numbered batches, taking
// empty batches from spare when there are any.
func (r *grepRun) feed(ctx context.Context, jobs chan<- grepJob, spare <-chan []fileRef) error {
	var batch []fileRef
	flush := func() {
		if len(batch) == 0 {
			return
		}
		r.mu.Lock()
		first := r.results.grow(len(batch))
		r.mu.Unlock()
		select {
		case jobs <- grepJob{first: first, files: batch}:
		case <-ctx.Done():
			for _, f := range batch {
				r.w.done(f)
			}
		}
		batch = nil // the worker owns the sent one
	}
	r.w.beforeWait = flush
	err := r.w.walk(ctx, r.plan.target, ancestorIgnores(r.w.ws, r.plan.target), func(f fileRef) bool {
		if batch == nil {
			select {
			case batch = <-spare:
			default:
				batch = make([]fileRef, 0, grepBatch)
			}
		}
		batch = append(batch, f)
		if len(batch) == grepBatch {
			flush()
		}
		return ctx.Err() == nil
	})
	flush()
	return err
}

// work is one worker: it searches the files of each batch up to the cutoff, records
// their results and hands the emptied batch back through spare.
func (r *grepRun) work(ctx context.Context, jobs <-chan grepJob, spare chan<- []fileRef) {
	var buf []byte
	var res []fileResult
	for j := range jobs {
		res = slices.Grow(res[:0], len(j.files))[:len(j.files)]
		for i, f := range j.files {
			res[i] = fileResult{}
			if int64(j.first+i) <= r.cutoff.Load() && ctx.Err() == nil {
				res[i], buf = r.search(r.w.ws, f, buf)
			}
			r.w.done(f)
		}
		r.record(j.first, res)
		clear(j.files)
		select {
		case spare <- j.files[:0]:
		default:
		}
	}
}

// grepBatch is the most files handed to a worker at once.
const grepBatch = 32

// grepJob is a batch of files numbered first, first+1, ...
type grepJob struct {
	first int
	files []fileRef
}

// fileResult is what one file contributed.
type fileResult struct {
	lines    []string // formatted matches, at most max+1
	searched bool     // read and found to be text
	done     bool
}

// resultLog holds results by walk order, in blocks that never move once made, so that it
// grows without copying what it holds.
type resultLog struct {
	blocks []*[resultBlock]fileResult
	n      int
}

const resultBlock = 1024

// grow adds n empty results and returns the number of the first.
func (l *resultLog) grow(n int) int {
	first := l.n
	l.n += n
	for len(l.blocks)*resultBlock < l.n {
		l.blocks = append(l.blocks, new([resultBlock]fileResult))
	}
	return first
}

// at returns result i.
func (l *resultLog) at(i int) *fileResult { return &l.blocks[i/resultBlock][i%resultBlock] }

// grepRun is the shared state of one grepTree.
type grepRun struct {
	plan *grepPlan
	w    *walker

	mu      sync.Mutex
	results resultLog    // by walk order
	prefix  int          // results before prefix are done and counted
	total   int          // matches before prefix
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

// record stores the results of files first, first+1, ... and advances the done prefix,
// cutting the search off once the prefix holds more matches than can be shown.
func (r *grepRun) record(first int, res []fileResult) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for i, x := range res {
		x.done = true
		*r.results.at(first + i) = x
	}
	for r.prefix < r.results.n && r.results.at(r.prefix).done && r.cutoff.Load() == math.MaxInt64 {
		r.total += len(r.results.at(r.prefix).lines)
		if r.total > r.plan.max {
			r.cutoff.Store(int64(r.prefix))
			r.w.stop()
		}
		r.prefix++
	}
}

func (r *grepRun) summary() grepSummary {
	var s grepSummary
	end := r.results.n
	if c := r.cutoff.Load(); c != math.MaxInt64 {
		end = int(c) + 1
		s.truncated = true
	}
	for i := range end {
		res := r.results.at(i)
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
