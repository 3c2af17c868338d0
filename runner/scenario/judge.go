package scenario

import (
	"fmt"

	"github.com/agentrunner/runner/runner/assert"
	"github.com/agentrunner/runner/runner/model"
	"github.com/agentrunner/runner/runner/result"
	"github.com/agentrunner/runner/runner/task"
	"github.com/agentrunner/runner/runner/transcript"
)

// judgeEnv lets judge assertions open their model and write to the transcript.
func (r *runState) judgeEnv(t *task.Task) *assert.JudgeEnv {
	open := r.opts.Judge
	if open != nil && r.opts.Budget != nil {
		open = func(spec string) (model.Model, error) {
			m, err := r.opts.Judge(spec)
			return r.opts.Budget.Wrap(m), err
		}
	}
	return &assert.JudgeEnv{
		Open:   open,
		Prompt: t.Prompt,
		Record: func(data transcript.Payload) { _ = r.record(0, data) },
	}
}

// totalJudgeUsage totals the judges' tokens apart from the agent's.
func (r *runState) totalJudgeUsage() {
	for _, a := range r.res.Assertions {
		if a.Judge != nil {
			if r.res.JudgeUsage == nil {
				r.res.JudgeUsage = &result.Usage{}
			}
			r.res.JudgeUsage.Add(result.Usage{PromptTokens: a.Judge.Usage.PromptTokens, CompletionTokens: a.Judge.Usage.CompletionTokens})
		}
	}
}

// judgeError says why an assertion could not be evaluated for a reason that is not the
// agent's doing (a judge unreachable or giving no verdict), or "".
func (r *runState) judgeError() string {
	for _, a := range r.res.Assertions {
		if a.Error {
			return fmt.Sprintf("%s (assert line %d)", a.Message, a.Line)
		}
	}
	return ""
}
