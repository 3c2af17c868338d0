package bench

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/agentrunner/runner/runner/model"
	"github.com/agentrunner/runner/runner/model/fakellm"
	"github.com/agentrunner/runner/runner/model/ollama"
	"github.com/agentrunner/runner/runner/result"
	"github.com/agentrunner/runner/runner/session"
	"github.com/agentrunner/runner/runner/task"
	"github.com/agentrunner/runner/tools/catalog"
)

// tasksWithCtx writes one-step tasks, each with its num_ctx (0: none), in name order.
func tasksWithCtx(t *testing.T, numCtx map[string]int) []*task.Task {
	t.Helper()
	dir := t.TempDir()
	for name, n := range numCtx {
		body := "name: " + name + "\nprompt: Finish " + name + ".\ntools: [read_file]\nassert:\n  - completed: true\n"
		if n > 0 {
			body += fmt.Sprintf("model_options: {num_ctx: %d}\n", n)
		}
		assert.NilError(t, os.WriteFile(filepath.Join(dir, name+".yaml"), []byte(body), 0o644))
	}
	tasks, err := session.LoadTasks([]string{dir}, catalog.Default(), "", &bytes.Buffer{})
	assert.NilError(t, err)
	return tasks
}

// TestLoadsCountedFromTheServer (issue 26, 1): every request of a big model reports tens
// of milliseconds of load_duration (here 80 ms, past the old 50 ms threshold), which
// made runner report 30 reloads in 15 cells where the server loaded 3 times. Loads are
// counted from /api/ps: exactly the server's, one per num_ctx, none inside a cell, and
// the default group runs to its end before the 2048 group starts.
func TestLoadsCountedFromTheServer(t *testing.T) {
	srv := fakellm.Start(fakellm.Script{Repeat: true, Replies: []fakellm.Reply{finish()},
		ScheduleTime: fakellm.Duration(80 * time.Millisecond), LoadDelay: fakellm.Duration(20 * time.Millisecond)})
	defer srv.Close()
	opts := benchOptions(t, srv, tasksWithCtx(t, map[string]int{"a": 0, "b": 2048, "c": 0}), "ollama:m")
	opts.Parallel = 2
	rep := Run(context.Background(), opts)
	m := rep.Models[0]
	assert.Equal(t, m.Summary.Passed, 6)
	assert.Equal(t, srv.Loads(), 2)
	assert.Equal(t, m.LoadCount, srv.Loads())
	assert.Equal(t, m.CellLoads, 0)
	assert.Equal(t, len(m.Loads), 2)
	assert.Equal(t, [2]int{m.Loads[0].NumCtx, m.Loads[1].NumCtx}, [2]int{0, 2048})
	assert.Assert(t, m.Loads[0].Loaded && m.Loads[1].Loaded)
	assert.Assert(t, m.Load.Duration() >= 40*time.Millisecond, "the two loads' time: %s", m.Load)
	assert.Equal(t, m.WarmUp, m.Loads[0].Duration)
	assert.DeepEqual(t, m.Placement, &model.Placement{Size: 1 << 30, SizeVRAM: 1 << 30, ContextLength: 4096})
	assert.Equal(t, len(rep.Warnings), 0, "%v", rep.Warnings)

	// Where the time went: 6 requests of 80 ms scheduling each, none of it a load.
	assert.Equal(t, m.Parallel.Cells, 2)
	assert.Equal(t, m.Parallel.Requests, 6)
	assert.Equal(t, m.Parallel.Schedule.Duration(), 480*time.Millisecond)
	assert.Assert(t, m.Parallel.Eval > 0 && m.Parallel.CellTime > 0 && m.Parallel.Wall > 0)

	var cells []result.Scenario
	for _, name := range []string{"a", "b", "c"} {
		for k := 1; k <= 2; k++ {
			var s result.Scenario
			b, err := os.ReadFile(filepath.Join(m.OutDir, name+".r"+fmt.Sprint(k), "result.json"))
			assert.NilError(t, err)
			assert.NilError(t, s.UnmarshalJSON(b))
			assert.Equal(t, s.Reloads, 0)
			cells = append(cells, s)
		}
	}
	sort.Slice(cells, func(i, j int) bool { return cells[i].Started.Before(cells[j].Started) })
	var lastDefault time.Time
	for _, c := range cells {
		if c.Name != "b" {
			lastDefault = c.Started.Add(c.Duration.Duration())
		}
	}
	for _, c := range cells {
		if c.Name == "b" {
			assert.Assert(t, !c.Started.Before(lastDefault), "a 2048 cell started before the default group ended")
		}
	}

	// Loaded so already: the next bench's first load is no load, and the count says so.
	before := srv.Loads()
	rep = Run(context.Background(), benchOptions(t, srv, tasksWithCtx(t, map[string]int{"b": 2048}), "ollama:m"))
	assert.Equal(t, srv.Loads(), before)
	assert.Equal(t, rep.Models[0].LoadCount, 0)
	assert.Assert(t, !rep.Models[0].Loads[0].Loaded)
}

// TestUnaskedLoadsSeen: another client has the server load the model with other options
// while a cell runs; /api/ps shows it at the cell's end: the load is counted, that cell
// marked with its wait kept out of its time, and the next cell has it loaded back.
func TestUnaskedLoadsSeen(t *testing.T) {
	slow := finish()
	slow.Delay = fakellm.Duration(300 * time.Millisecond)
	srv := fakellm.Start(fakellm.Script{Repeat: true, Replies: []fakellm.Reply{slow}})
	defer srv.Close()
	other, err := ollama.New(ollama.Config{Model: "m", Host: srv.URL()})
	assert.NilError(t, err)
	var once sync.Once
	loaded := make(chan struct{})
	srv.OnRequest(func(fakellm.Request) {
		once.Do(func() {
			go func() {
				defer close(loaded)
				_, _ = other.Load(context.Background(), model.Options{NumCtx: 999})
			}()
		})
	})
	opts := benchOptions(t, srv, tasksWithCtx(t, map[string]int{"a": 0}), "ollama:m")
	rep := Run(context.Background(), opts)
	<-loaded
	m := rep.Models[0]
	assert.Equal(t, srv.Loads(), 3, "the first load, the other client's, and the load back")
	assert.Equal(t, m.LoadCount, srv.Loads())
	assert.Equal(t, m.CellLoads, 1)
	assert.Equal(t, len(m.Loads), 2)
	assert.Assert(t, m.Loads[1].Loaded)
	var marked int
	for k := 1; k <= 2; k++ {
		var s result.Scenario
		b, err := os.ReadFile(filepath.Join(m.OutDir, "a.r"+fmt.Sprint(k), "result.json"))
		assert.NilError(t, err)
		assert.NilError(t, s.UnmarshalJSON(b))
		assert.Equal(t, s.Status, result.Passed)
	}
	for _, w := range rep.Warnings {
		if strings.Contains(w, "while cells ran, unasked") {
			marked++
		}
	}
	assert.Equal(t, marked, 1, "%v", rep.Warnings)
}

// TestPartlyOnCPUFlagged (issue 26, 3): a model the server holds partly in GPU memory
// (/api/ps size_vram < size) is recorded, warned about and marked in bench.md and
// bench.html; a model fully on CPU beside it is marked too, since the machine has a GPU.
func TestPartlyOnCPUFlagged(t *testing.T) {
	srv := fakellm.Start(fakellm.Script{Repeat: true, Replies: []fakellm.Reply{finish()},
		Placements: map[string]fakellm.Placement{"split": {Size: 1000, SizeVRAM: 600}, "cpu": {Size: 1000}, "gpu": {Size: 1000, SizeVRAM: 1000}}})
	defer srv.Close()
	opts := benchOptions(t, srv, tasksWithCtx(t, map[string]int{"a": 0}), "ollama:gpu", "ollama:split", "ollama:cpu")
	var warn bytes.Buffer
	opts.Warn = &warn
	rep := Run(context.Background(), opts)
	gpu, split, cpu := rep.Models[0], rep.Models[1], rep.Models[2]
	assert.Equal(t, gpu.Placement.Processor(), "100% GPU")
	assert.Equal(t, split.Placement.Processor(), "40%/60% CPU/GPU")
	assert.Equal(t, cpu.Placement.Processor(), "100% CPU")
	assert.Equal(t, split.Probe.ServerVersion, "0.0.0-fakellm")
	assert.Equal(t, len(rep.Warnings), 2, "%v", rep.Warnings)
	assert.Check(t, is.Contains(rep.Warnings[0], "ollama:split: partly on CPU (40%/60% CPU/GPU)"))
	assert.Check(t, is.Contains(rep.Warnings[1], "ollama:cpu: on CPU (100% CPU) although the machine has a GPU"))
	assert.Check(t, is.Contains(warn.String(), "partly on CPU"))

	var md, page bytes.Buffer
	assert.NilError(t, WriteMarkdown(&md, rep, nil))
	assert.Check(t, is.Contains(md.String(), "| ⚠ 40%/60% CPU/GPU, context 4096 |"), md.String())
	assert.Check(t, is.Contains(md.String(), "| 100% GPU, context 4096 |"))
	assert.Check(t, is.Contains(md.String(), "| 0\\.0.0-fakellm |"))
	assert.NilError(t, WriteHTML(&page, rep, nil))
	assert.Check(t, is.Contains(page.String(), `<td class="reg">⚠ 40%/60% CPU/GPU, context 4096</td>`))

	// All on CPU with no GPU anywhere (a CPU server): nothing to flag.
	cpuOnly := *rep
	cpuOnly.Models = []ModelResult{cpu}
	assert.Equal(t, len(placementWarnings(&cpuOnly)), 0)
	cpuOnly.Machine = &Machine{GPUs: []model.GPU{{ID: "GPU-1", Name: "NVIDIA H200", Library: "CUDA"}}}
	assert.Equal(t, len(placementWarnings(&cpuOnly)), 1, "the server's log lists a GPU")
}

// TestCompareSaysTheSetupChanged (issue 26, 3): bench compare names a different
// placement, context, server version or GPU before any verdict.
func TestCompareSaysTheSetupChanged(t *testing.T) {
	base := report("ollama:m", map[string]string{"a": "ppppp"}, "a")
	cur := report("ollama:m", map[string]string{"a": "ppppp"}, "a")
	base.Models[0].Placement = &model.Placement{Size: 1000, SizeVRAM: 1000, ContextLength: 4096}
	cur.Models[0].Placement = &model.Placement{Size: 1000, SizeVRAM: 300, ContextLength: 8192}
	base.Models[0].Probe = &model.Info{ServerVersion: "0.17.4"}
	cur.Models[0].Probe = &model.Info{ServerVersion: "0.18.0"}
	base.Machine = &Machine{GPUs: []model.GPU{{Name: "NVIDIA H200", Memory: "139.8 GiB"}}}
	cur.Machine = &Machine{GPUs: []model.GPU{{Name: "NVIDIA L4", Memory: "22.5 GiB"}}}
	cmp := Compare(base, cur, Alpha)
	assert.DeepEqual(t, cmp.Setup, []string{
		"the machine's GPUs: NVIDIA H200 139.8 GiB, now NVIDIA L4 22.5 GiB",
		"ollama:m: placement 100% GPU, now 70%/30% CPU/GPU",
		"ollama:m: loaded context 4096, now 8192",
		"ollama:m: server version 0.17.4, now 0.18.0",
	})
	var text, md bytes.Buffer
	assert.NilError(t, cmp.WriteText(&text))
	assert.Assert(t, strings.HasPrefix(text.String(), "warning: the benches ran on different setups: the machine's GPUs"), text.String())
	assert.NilError(t, WriteMarkdown(&md, cur, &cmp))
	verdict := strings.Index(md.String(), "## Verdict")
	setup := strings.Index(md.String(), "The benches ran on different setups")
	noReg := strings.Index(md.String(), "No significant regression")
	assert.Assert(t, verdict >= 0 && setup > verdict && noReg > setup, md.String())

	// A version 2 baseline has no placement: said, not guessed.
	base.Models[0].Placement = nil
	cmp = Compare(base, cur, Alpha)
	assert.Check(t, is.Contains(strings.Join(cmp.Setup, "\n"), "the baseline does not record where the model ran (now 70%/30% CPU/GPU)"))
	assert.DeepEqual(t, Compare(cur, cur, Alpha).Setup, []string(nil))
}

// TestTimeSectionSaysWhereTheTimeWent: bench.md says how many cells ran at once against
// how many slots, and splits the server's time.
func TestTimeSectionSaysWhereTheTimeWent(t *testing.T) {
	r := report("ollama:m", map[string]string{"a": "pp"}, "a")
	r.Models[0].Parallel = Parallel{Cells: 2, Slots: 2, Wall: result.Millis(time.Second), CellTime: result.Millis(1900 * time.Millisecond),
		Requests: 4, PromptEval: result.Millis(400 * time.Millisecond), Eval: result.Millis(800 * time.Millisecond),
		Schedule: result.Millis(8 * time.Millisecond), Wait: result.Millis(200 * time.Millisecond)}
	var md bytes.Buffer
	assert.NilError(t, WriteMarkdown(&md, r, nil))
	assert.Check(t, is.Contains(md.String(), "ollama:m: up to 2 cell(s) at once (server slots: 2); the cells took 1.00 s of wall time for 1.90 s of their own (1.90 at once on average), loads excluded; per request, on the server: prompt 100.0 ms, generation 200.0 ms, scheduling 2.0 ms, waiting 50.0 ms."), md.String())
}

// TestLoadKeptOutOfCellTimes (issue 26, 4): a cell marked as having waited for a load
// has that wait kept out of its wall time, the mean and the p95.
func TestLoadKeptOutOfCellTimes(t *testing.T) {
	cells := []result.Scenario{
		{Name: "a", Status: result.Passed, Duration: result.Millis(2100 * time.Millisecond), LoadTime: result.Millis(2000 * time.Millisecond), Reloads: 1},
		{Name: "a", Status: result.Passed, Duration: result.Millis(100 * time.Millisecond)},
	}
	sum, _ := Aggregate(cells, 2)
	assert.Equal(t, sum.WallMS, Dist{Mean: 100, P95: 100})
	var p Parallel
	p.time(result.Run{Duration: result.Millis(5 * time.Second)}, cells, result.Millis(3*time.Second))
	assert.Equal(t, p.CellTime.Duration(), 200*time.Millisecond)
	assert.Equal(t, p.Wall.Duration(), 2*time.Second, "the loads between groups are out of the wall time")
}

// TestMarksTheCellsRunningDuringAnUnaskedLoad: the tracker marks every cell running when
// /api/ps shows a load nobody asked for, and only those.
func TestMarksTheCellsRunningDuringAnUnaskedLoad(t *testing.T) {
	srv := fakellm.Start(fakellm.Script{})
	defer srv.Close()
	m, err := ollama.New(ollama.Config{Model: "m", Host: srv.URL()})
	assert.NilError(t, err)
	other, err := ollama.New(ollama.Config{Model: "m", Host: srv.URL()})
	assert.NilError(t, err)
	ctx := context.Background()
	l := newLoads(m, func(string) {})
	assert.NilError(t, l.load(ctx, 0))
	l.ensure(ctx, 0) // loaded so: nothing to do
	assert.Equal(t, len(l.asked), 1)
	l.begin(1)
	l.begin(2)
	assert.Assert(t, !l.end(ctx, 2), "nothing happened while cell 2 ran")
	l.begin(3)
	_, err = other.Load(ctx, model.Options{NumCtx: 999})
	assert.NilError(t, err)
	assert.Assert(t, l.end(ctx, 3))
	assert.Assert(t, l.end(ctx, 1), "cell 1 was running too")
	l.ensure(ctx, 0)
	assert.Equal(t, len(l.asked), 2, "loaded back for the next cell")
	sum := l.summary(nil)
	assert.Equal(t, [2]int{sum.count, sum.unasked}, [2]int{3, 1})
	assert.Equal(t, sum.count, srv.Loads())
}

// TestServerLogIsData (attack): the server's log is text runner did not write; a device
// name crafted as Markdown and HTML reaches bench.md and bench.html as inert text, and a
// line that only mentions a load is no load.
func TestServerLogIsData(t *testing.T) {
	srv := fakellm.Start(fakellm.Script{Repeat: true, Replies: []fakellm.Reply{finish()}})
	defer srv.Close()
	log := filepath.Join(t.TempDir(), "server.log")
	evil := `time=2026-11-28T04:00:00.000Z level=INFO source=types.go:42 msg="inference compute" id=GPU-1 library=CUDA compute=9.0 name=CUDA0 description="<img src=x onerror=alert(1)> [pwn](https://evil.example) | cell" total="80 GiB"
time=2026-11-28T04:00:01.000Z level=INFO source=x.go:1 msg="not a load" note="msg=\"loading model\""
`
	assert.NilError(t, os.WriteFile(log, []byte(evil), 0o644))
	opts := benchOptions(t, srv, tasksWithCtx(t, map[string]int{"a": 0}), "ollama:m")
	opts.ServerLog = log
	rep := Run(context.Background(), opts)
	assert.Equal(t, rep.Machine.GPUs[0].Name, "<img src=x onerror=alert(1)> [pwn](https://evil.example) | cell")
	assert.Equal(t, *rep.Models[0].LoggedLoads, 0)
	var md, page bytes.Buffer
	assert.NilError(t, WriteMarkdown(&md, rep, nil))
	unescaped := regexp.MustCompile(`(^|[^\\])(<img|\]\(https|\| cell)`)
	assert.Check(t, !unescaped.MatchString(md.String()), "live Markdown or HTML: %s", unescaped.FindString(md.String()))
	assert.Check(t, is.Contains(md.String(), `\<img src=x`))
	assert.NilError(t, WriteHTML(&page, rep, nil))
	assert.Check(t, !strings.Contains(page.String(), "<img src=x"))
	assert.Check(t, is.Contains(page.String(), "&lt;img src=x onerror=alert(1)&gt;"))
}

// TestCellsCappedAtTheServersSlots (issue 26, 2): with the server's log saying it runs 2
// requests at once, -j 4 runs 2 cells at once: more would only queue at the server, their
// wait read as a slower model.
func TestCellsCappedAtTheServersSlots(t *testing.T) {
	srv := fakellm.Start(fakellm.Script{Repeat: true, Replies: []fakellm.Reply{finish()}})
	defer srv.Close()
	log := filepath.Join(t.TempDir(), "server.log")
	line := `time=2026-11-28T04:33:20.058Z level=INFO source=runner.go:895 msg=load request="{Operation:commit LoraPath:[] Parallel:2 BatchSize:512 FlashAttention:Auto KvSize:8192 KvCacheType: NumThreads:2 GPULayers:[] MultiUserCache:false ProjectorPath: MainGPU:0 UseMmap:false}"` + "\n"
	assert.NilError(t, os.WriteFile(log, []byte(line), 0o644))
	opts := benchOptions(t, srv, tasksWithCtx(t, map[string]int{"a": 0, "b": 0, "c": 0}), "ollama:m")
	opts.ServerLog, opts.Parallel = log, 4
	var mu sync.Mutex
	running, most := 0, 0
	opts.OnStart = func(result.Scenario) { mu.Lock(); running++; most = max(most, running); mu.Unlock() }
	opts.OnDone = func(result.Scenario) { mu.Lock(); running--; mu.Unlock() }
	rep := Run(context.Background(), opts)
	m := rep.Models[0]
	assert.Equal(t, m.Parallel.Slots, 2)
	assert.Equal(t, m.Parallel.Cells, 2)
	assert.Assert(t, most <= 2, "%d cells at once", most)
	assert.Check(t, is.Contains(strings.Join(rep.Warnings, "\n"), "-j 4 but the server runs 2 request(s) at once"))
}
