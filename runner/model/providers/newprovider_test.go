package providers_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/agentrunner/runner/runner/model"
	"github.com/agentrunner/runner/runner/model/providers"
	"github.com/agentrunner/runner/runner/model/retry"
	"github.com/agentrunner/runner/runner/model/textcall"
	"github.com/agentrunner/runner/runner/scrub"
)

// parrot is a whole provider written in this one file, to show what adding a provider
// takes: its client (a model that writes its tool calls as text, has a pre-flight check
// and describes itself) and its row (parrotRow), which the test registers.
type parrot struct{ name, key string }

func (p *parrot) Name() string { return "parrot:" + p.name }

func (p *parrot) Step(context.Context, *model.Request) (*model.Response, error) {
	return &model.Response{Content: `<tool_call>{"name": "task_complete", "arguments": {"summary": "squawk"}}</tool_call>`}, nil
}

// Check is the pre-flight check, found behind Open's wrappers.
func (p *parrot) Check(context.Context) error {
	if p.key == "" {
		return errors.New("parrot: PARROT_API_KEY is not set")
	}
	return nil
}

// Probe is what the server would say of the model, for bench.
func (p *parrot) Probe(context.Context) (model.Info, error) {
	return model.Info{Family: "parrot", Tools: true}, nil
}

var parrotRow = providers.Provider{
	Name: "parrot", Help: "repeats what it was taught (a test's)",
	Env: []providers.Env{
		{Name: "PARROT_API_KEY", Help: "its key (required)"},
		{Name: "PARROT_HOST", Help: "default the perch"},
	},
	PreCheck: "the key is set",
	Parser:   textcall.Auto, // it writes its calls as text
	CheckName: func(name string) error {
		if strings.ContainsAny(name, "/:") {
			return fmt.Errorf("a parrot's name is one word, got %q", name)
		}
		return nil
	},
	New: func(name string, _ providers.OpenOptions, getenv func(string) string) (model.Model, error) {
		if name == "" {
			return nil, errors.New("parrot: missing model name (e.g. parrot:polly)")
		}
		return &parrot{name: name, key: getenv("PARROT_API_KEY")}, nil
	},
}

// TestANewProviderIsOneFileAndOneRow: with nothing but its row registered, the provider
// is a name that CheckName, Open, the --model help (Names) and the environment help know;
// Open wraps its model with retries and the row's parser; the pre-flight check and the
// probe are found through the wrappers; and its key is scrubbed from every output.
func TestANewProviderIsOneFileAndOneRow(t *testing.T) {
	saved := providers.Registry
	t.Cleanup(func() { providers.Registry = saved })
	assert.ErrorContains(t, providers.CheckName("parrot:polly"), `unknown provider "parrot"`, "unknown before its row")
	providers.Register(parrotRow)

	assert.Check(t, slices.Contains(providers.Names(), "parrot"))
	assert.Check(t, slices.IsSorted(providers.Names()))
	assert.NilError(t, providers.CheckName("parrot:polly"))
	assert.Error(t, providers.CheckName("parrot:polly/2"), `model "parrot:polly/2": a parrot's name is one word, got "polly/2"`)
	assert.ErrorContains(t, providers.CheckName("parot:polly"), `did you mean "parrot:polly"?`)
	assert.Check(t, is.Contains(providers.EnvHelp(""), "PARROT_API_KEY       parrot:NAME: its key (required)"))

	const key = "parrot-key-0123456789"
	getenv := func(k string) string { return map[string]string{"PARROT_API_KEY": key}[k] }
	m, err := providers.Open("parrot:polly", providers.OpenOptions{Getenv: getenv})
	assert.NilError(t, err)
	_, retried := model.Find[*retry.Model](m)
	assert.Check(t, retried, "Open wraps it with retries")
	resp, err := m.Step(t.Context(), &model.Request{})
	assert.NilError(t, err)
	assert.Equal(t, len(resp.ToolCalls), 1, "the row's parser read the call written as text")
	assert.Equal(t, resp.ToolCalls[0].Name, "task_complete")
	assert.NilError(t, providers.Check(t.Context(), m))
	info, err := providers.Probe(t.Context(), m)
	assert.NilError(t, err)
	assert.Equal(t, info.Family, "parrot")
	assert.Equal(t, scrub.String("the key is "+key), "the key is "+scrub.Redacted, "its variables reached the scrubber")

	unkeyed, err := providers.Open("parrot:polly", providers.OpenOptions{Getenv: func(string) string { return "" }})
	assert.NilError(t, err)
	assert.Error(t, providers.Check(t.Context(), unkeyed), "parrot: PARROT_API_KEY is not set")
	_, err = providers.Open("parrot:", providers.OpenOptions{})
	assert.Error(t, err, `model "parrot:": parrot: missing model name (e.g. parrot:polly)`)
}
