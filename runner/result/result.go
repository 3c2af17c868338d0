// Package result holds the plain, self-describing record of a finished scenario: what the
// agent loop and the assertions produce, and what every report reads. Result files carry
// their model and repeat index so runs from several machines can be merged.
package result

import "time"

// Status is a scenario's final verdict.
type Status string

// Statuses, in order of severity for the exit code.
const (
	// Passed: every assertion held.
	Passed Status = "passed"
	// Failed: an assertion failed, or the agent hit a limit the assertions did not allow.
	Failed Status = "failed"
	// Errored: infrastructure failed (model unreachable, setup failed, interrupted).
	Errored Status = "error"
)

// StopReason says why the agent loop ended.
type StopReason string

// Stop reasons.
const (
	StopCompleted StopReason = "completed" // the model called task_complete
	StopMaxSteps  StopReason = "max_steps" // the step limit was reached
	StopTimeout   StopReason = "timeout"   // the scenario timeout expired
	StopStopped   StopReason = "stopped"   // the model answered twice without a tool call
	StopError     StopReason = "error"     // the model or the runner failed
	StopInterrupt StopReason = "interrupted"
	StopNotRun    StopReason = "not_run" // never started: a budget was spent (runner bench)
	StopGaveUp    StopReason = "gave_up" // an external agent ended without saying it finished (a non-zero exit)
	StopBudget    StopReason = "budget"  // the run's --budget-usd was spent: the next model call was refused
)

// Scenario is the outcome of one run of one task.
type Scenario struct {
	Name string `json:"name"`
	File string `json:"file"`
	// Task, Case and Vars are set for one case of a task file expanded over vars:, a
	// matrix: or a dataset:: the task's own name, the case label and the values used.
	Task  string         `json:"task,omitempty"`
	Case  string         `json:"case,omitempty"`
	Vars  map[string]any `json:"vars,omitempty"`
	Tags  []string       `json:"tags,omitempty"`
	Model string         `json:"model"`
	// Agent is the external agent that acted (runner/agent/kinds: claude-code, codex,
	// command); "" for runner's own loop.
	Agent  string `json:"agent,omitempty"`
	Repeat int    `json:"repeat"`
	// Index is the scenario's place in the whole (unsharded) run, so results of shards or
	// resumed runs merge back into the order one run would have reported.
	Index int `json:"index"`
	// RunnerVersion is the runner build that produced the result (version.String()).
	RunnerVersion string `json:"runner_version,omitempty"`

	Status Status     `json:"status"`
	Stop   StopReason `json:"stop_reason"`
	// Reason is a one-line human explanation of a failure or error ("" when passed).
	Reason string `json:"reason,omitempty"`
	// Line is the task-file line of the failure's cause: the first failed assertion, or
	// the max_steps/timeout key of the limit hit (0 when passed or unknown).
	Line int `json:"line,omitempty"`
	// Summary is the summary the model gave to task_complete.
	Summary string `json:"summary,omitempty"`

	Steps     int       `json:"steps"`
	ToolCalls int       `json:"tool_calls"`
	Denied    int       `json:"denied"`
	Usage     Usage     `json:"usage"`
	Started   time.Time `json:"started"`
	// Duration is the whole scenario: setup, agent loop and assertions.
	Duration Millis `json:"duration_ms"`
	// ModelTime is the time spent waiting for the model.
	ModelTime Millis `json:"model_time_ms"`
	// ToolTime is the time spent executing tools.
	ToolTime Millis `json:"tool_time_ms"`
	// SetupTime is the prepare stage (output, workspace, container, setup commands, MCP
	// servers, snapshot); VerifyTime the verification (changes, verify files, assertions,
	// judges) and the verdict. See TimeParts for how the four add up to Duration.
	SetupTime  Millis `json:"setup_time_ms,omitempty"`
	VerifyTime Millis `json:"verify_time_ms,omitempty"`

	Assertions []Assertion `json:"assertions"`
	// Transcript is the path of the scenario's transcript.jsonl.
	Transcript string `json:"transcript,omitempty"`
	// Workspace is the kept workspace, when --keep-workspaces was given.
	Workspace string `json:"workspace,omitempty"`
	// Sandbox names the mechanism that confined commands.
	Sandbox string `json:"sandbox,omitempty"`
	// FilesChanged is what the agent did to the workspace's files, found by comparing
	// the workspace before and after it ran (nil when the agent never ran).
	FilesChanged *FileChanges `json:"files_changed,omitempty"`
	// SandboxGaps says, in short phrases, what that sandbox did not confine on the machine
	// that ran the scenario (see sandbox.Gaps); absent when nothing is known to be open.
	SandboxGaps []string `json:"sandbox_gaps,omitempty"`
	// JudgeUsage totals the tokens of judge assertions, apart from the agent's Usage.
	JudgeUsage *Usage `json:"judge_usage,omitempty"`
	// Cost is what the model calls cost (see Cost); absent when the scenario never ran.
	Cost *Cost `json:"cost,omitempty"`
	// Score is the task's score between 0 and 1, when the task defines one (score:).
	Score *float64 `json:"score,omitempty"`
	// ScoreNote says why the score is 0 when it could not be read ("" otherwise).
	ScoreNote string `json:"score_note,omitempty"`

	// Repeats is how many times the task was run (0 or 1: not repeated); Repeat is this
	// run's number among them, from 1, as in its display name ("name #2") and directory
	// ("name.r2"). (Before 2026-11-26 Repeat counted from 0.)
	Repeats int `json:"repeats,omitempty"`
	// ToolErrors counts executed tool calls that returned an error result.
	ToolErrors int `json:"tool_errors"`
	// MaxPromptTokens is the largest prompt of one model request.
	MaxPromptTokens int `json:"max_prompt_tokens,omitempty"`
	// Warnings are what a reader should know although the verdict does not show it: a
	// prompt the server truncated, an answer the token limit cut off, an empty answer
	// after generated tokens.
	Warnings []string `json:"warnings,omitempty"`
	// Reloads is how many times the server loaded the model while this scenario ran, as
	// runner bench saw in the server's list of loaded models (Ollama's /api/ps), and
	// LoadTime the time its requests waited meanwhile (Ollama's load_duration): set by
	// runner bench on its own copy of the record, which keeps that time out of the
	// scenario's wall time in bench.json; a scenario's result.json leaves them 0. (Older
	// runners wrote here the requests whose load_duration passed 50 ms, which on a big
	// model is every request.)
	LoadTime Millis `json:"load_time_ms,omitempty"`
	Reloads  int    `json:"reloads,omitempty"`
}

// TimePart is one share of a scenario's Duration.
type TimePart struct {
	Name string
	Time Millis
}

// TimeParts splits Duration into setup, model, tools and verification, in that order,
// plus "other" (the loop's own work, waiting for the model's pre-flight check, cleanup)
// when it is at least 50 ms, so the parts shown add up to the whole. A record older
// than the setup and verification fields has only model and tools, and the rest.
func (s Scenario) TimeParts() []TimePart {
	parts := []TimePart{{"setup", s.SetupTime}, {"model", s.ModelTime}, {"tools", s.ToolTime}, {"verification", s.VerifyTime}}
	if s.SetupTime == 0 && s.VerifyTime == 0 {
		parts = []TimePart{parts[1], parts[2]}
	}
	var sum Millis
	for _, p := range parts {
		sum += p.Time
	}
	if other := s.Duration - sum; other >= Millis(50*time.Millisecond) {
		parts = append(parts, TimePart{"other", other})
	}
	return parts
}

// Call is the record of one tool call the agent made: what the loop saw and what the
// assertions and reports read.
type Call struct {
	ID   string `json:"id,omitempty"`
	Name string `json:"name"` // as the model called it
	Tool string `json:"tool"` // canonical name; "" when the tool is unknown
	// Args are the arguments as compact JSON with sorted keys.
	Args string `json:"args"`
	// Executed is true when the tool actually ran (it may still have failed).
	Executed bool `json:"executed"`
	// Denied is true when the approval policy refused the call.
	Denied  bool `json:"denied"`
	Success bool `json:"success"`
	// Duration is the call's wall time: decoding, policy and execution.
	Duration Millis `json:"duration_ms"`
}

// FileChanges lists the workspace paths the agent created, changed or deleted, by any
// means (file tools or commands); directories end in "/". Each list holds at most
// MaxListedFiles paths; Total counts them all.
type FileChanges struct {
	Created []string `json:"created,omitempty"`
	Changed []string `json:"changed,omitempty"`
	Deleted []string `json:"deleted,omitempty"`
	// Total is the number of changed paths, listed or not.
	Total int `json:"total"`
	// Omitted is how many changed paths the lists leave out.
	Omitted int `json:"omitted,omitempty"`
	// Protected are the changed paths that the task's verify.protect globs cover; any
	// fails the scenario.
	Protected []string `json:"protected,omitempty"`
	// Outside are the paths of an environment's container that changed outside the
	// workspace during the agent's turn ("C /usr/local/bin/pytest": A added, C changed,
	// D deleted), as the engine's diff lists them.
	Outside []string `json:"outside,omitempty"`
	// Incomplete is set when the workspace held too many entries to compare them all
	// (protected paths are always compared).
	Incomplete bool `json:"incomplete,omitempty"`
}

// MaxListedFiles caps each list of FileChanges.
const MaxListedFiles = 100

// Usage totals token counts over a scenario.
type Usage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	// CachedPromptTokens are prompt tokens the provider served from its cache, where its
	// API reports them (priced at the cached-input price).
	CachedPromptTokens int     `json:"cached_prompt_tokens,omitempty"`
	TokensPerSecond    float64 `json:"tokens_per_second,omitempty"`
	// EvalTime is the server's generation time over the CompletionTokens it reports it
	// for (Ollama's eval_duration), so rates add up across scenarios: total tokens over
	// total time.
	EvalTime Millis `json:"eval_time_ms,omitempty"`
	// PromptEvalTime, ScheduleTime and ServerTime are the server's own times, summed over
	// the requests, where it reports them (Ollama's prompt_eval_duration, load_duration
	// and total_duration): reading the prompt, waiting for the model to be scheduled (and
	// loaded, when it was), and the whole request. ServerTime less the other three and
	// EvalTime is time spent waiting: for a free slot, or for other requests' turn in a
	// batch they share.
	PromptEvalTime Millis `json:"prompt_eval_time_ms,omitempty"`
	ScheduleTime   Millis `json:"schedule_time_ms,omitempty"`
	ServerTime     Millis `json:"server_time_ms,omitempty"`
}

// Assertion is the outcome of one assertion.
type Assertion struct {
	Kind string `json:"kind"`
	// Line and Column locate the assertion in the task file, for annotations.
	Line    int    `json:"line,omitempty"`
	Column  int    `json:"column,omitempty"`
	Passed  bool   `json:"passed"`
	Message string `json:"message"`
	// Error is set when the assertion could not be evaluated for a reason that is not
	// the agent's doing (a judge model unreachable): the scenario errors, not fails.
	Error bool `json:"error,omitempty"`
	// Judge is a judge assertion's verdict.
	Judge *Verdict `json:"judge,omitempty"`
	// Tests are the per-test results of a command assertion with junit: or format:.
	Tests []Test `json:"tests,omitempty"`
	// PassFraction is the fraction of Tests that passed (skipped ones left out), when
	// there are per-test results.
	PassFraction *float64 `json:"pass_fraction,omitempty"`
}

// Verdict is what a judge model said about the agent's work.
type Verdict struct {
	Model     string  `json:"model"`
	Score     float64 `json:"score"`
	MinScore  float64 `json:"min_score"`
	Reasoning string  `json:"reasoning"`
	Usage     Usage   `json:"usage"`
}

// TestStatus is one test's outcome.
type TestStatus string

// Test outcomes, as JUnit and pytest report them.
const (
	TestPassed  TestStatus = "passed"
	TestFailed  TestStatus = "failed"
	TestError   TestStatus = "error"
	TestSkipped TestStatus = "skipped"
)

// Test is one test of a test suite that a command assertion ran (pytest's, a JUnit file's).
type Test struct {
	Name string `json:"name"`
	// Classname is the test's class or file ("tests/test_outputs.py"), when known.
	Classname string     `json:"classname,omitempty"`
	Status    TestStatus `json:"status"`
	// Message is the failure's or skip's message, when there is one.
	Message  string `json:"message,omitempty"`
	Duration Millis `json:"duration_ms,omitempty"`
}

// PassFraction is the fraction of tests that passed, skipped tests left out; nil when no
// test counts.
func PassFraction(tests []Test) *float64 {
	passed, counted := 0, 0
	for _, t := range tests {
		switch t.Status {
		case TestSkipped:
			continue
		case TestPassed:
			passed++
		}
		counted++
	}
	if counted == 0 {
		return nil
	}
	f := float64(passed) / float64(counted)
	return &f
}

// Run is a whole invocation: every scenario plus totals.
type Run struct {
	Started   time.Time  `json:"started"`
	Duration  Millis     `json:"duration_ms"`
	Scenarios []Scenario `json:"scenarios"`
	// Warmup is what runner did before the scenarios (not in Duration); nil when nothing.
	Warmup *Warmup `json:"warmup,omitempty"`
}

// Warmup is runner's own step before any scenario: the shared build cache warmed once
// for the toolchains the tasks use, so that scenarios do not each compile the same
// standard library from a cold cache (see session.Warm).
type Warmup struct {
	Toolchains []Warmed `json:"toolchains"`
	// Duration is the whole step.
	Duration Millis `json:"duration_ms"`
}

// Warmed is one toolchain's warming, for one configuration of it.
type Warmed struct {
	// Name is the toolchain ("go"); Detail what was built ("testing and 2 more standard
	// packages, CGO_ENABLED=0").
	Name   string `json:"name"`
	Detail string `json:"detail,omitempty"`
	// Tasks counts the tasks that use it so.
	Tasks    int    `json:"tasks"`
	Duration Millis `json:"duration_ms"`
	// Error says why it failed ("" when it did not): those tasks' scenarios then build
	// from a colder cache, and nothing else changes.
	Error string `json:"error,omitempty"`
}

// Counts tallies scenarios by status.
func (r Run) Counts() (passed, failed, errored int) {
	for _, s := range r.Scenarios {
		switch s.Status {
		case Passed:
			passed++
		case Failed:
			failed++
		default:
			errored++
		}
	}
	return passed, failed, errored
}
