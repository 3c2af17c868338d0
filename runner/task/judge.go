package task

import (
	"strings"

	"github.com/goccy/go-yaml/ast"
)

// KindJudge is the judge assertion; its Spec is a Judge.
const KindJudge = "judge"

// Judge asks a model to grade the agent's work against a rubric. It passes when the
// judge's score (0 to 1, given through a verdict tool call) is at least MinScore.
type Judge struct {
	// Model is PROVIDER:MODEL, opened like the agent's model (not the oracle).
	Model  string `json:"model" jsonschema:"required,pattern=^[^:]+:.+$" jsonschema_description:"The judge's model, PROVIDER:MODEL (not the oracle)."`
	Rubric string `json:"rubric" jsonschema:"required,minLength=1" jsonschema_description:"What good work looks like, for the judge."`
	// Files are workspace files the judge reads, as they are after the agent (capped).
	Files    []string `json:"files,omitempty" jsonschema:"maxItems=20" jsonschema_description:"Workspace files the judge reads after the agent is done (each capped at 64 KiB, 256 KiB in all)." jsonschema_extras:"use=paths"`
	MinScore float64  `json:"min_score" jsonschema:"minimum=0,maximum=1" jsonschema_description:"The pass mark: passes when score >= min_score. Default: 0.7."`
}

// DefaultMinScore is a judge's pass mark when the task sets none.
const DefaultMinScore = 0.7

// MaxJudgeFiles bounds files: the judge's prompt must stay within a model's context.
const MaxJudgeFiles = 20

var judgeFields = keysOf(Judge{})

func (l *loader) judge(n ast.Node, f string) (Judge, bool) {
	d := l.d
	j := Judge{MinScore: DefaultMinScore}
	ok := l.fields(n, f, judgeFields, []string{"model", "rubric"}, func(e entry, f string) bool {
		var ok bool
		switch e.key {
		case "model":
			if j.Model, ok = d.nonEmpty(e.value, f); ok {
				provider, name, found := strings.Cut(j.Model, ":")
				switch {
				case provider == "oracle":
					d.fail(e.value, f, "the oracle cannot judge; name a model, like openai:gpt-4o-mini or ollama:qwen3:8b")
					ok = false
				case !found || provider == "" || name == "":
					d.fail(e.value, f, "want PROVIDER:MODEL, like openai:gpt-4o-mini or ollama:qwen3:8b, got %q", j.Model)
					ok = false
				}
			}
		case "rubric":
			j.Rubric, ok = d.nonEmpty(e.value, f)
		case "files":
			items, _ := d.items(e.value, f)
			ok = true
			if len(items) > MaxJudgeFiles {
				d.fail(e.value, f, "at most %d files, got %d", MaxJudgeFiles, len(items))
				ok = false
			}
			for i, it := range items {
				p, pok := l.wsPath(it, index(f, i))
				ok = ok && pok
				j.Files = append(j.Files, p)
			}
		case "min_score":
			if j.MinScore, ok = d.number(e.value, f); ok && (j.MinScore < 0 || j.MinScore > 1) {
				d.fail(e.value, f, "must be between 0 and 1, got %v", j.MinScore)
				ok = false
			}
		}
		return ok
	})
	return j, ok
}
