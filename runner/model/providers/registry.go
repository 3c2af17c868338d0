package providers

import (
	"fmt"
	"strings"

	"github.com/agentrunner/runner/runner/model"
	"github.com/agentrunner/runner/runner/model/anthropic"
	"github.com/agentrunner/runner/runner/model/gemini"
	"github.com/agentrunner/runner/runner/model/ollama"
	"github.com/agentrunner/runner/runner/model/openai"
	"github.com/agentrunner/runner/runner/model/openairesponses"
	"github.com/agentrunner/runner/runner/model/oracle"
	"github.com/agentrunner/runner/runner/model/textcall"
)

// Provider is one row of the registry: what PROVIDER in PROVIDER:MODEL names. Open, the
// --model help, the environment section of --help and the README read Registry; a new
// provider is its package plus one row.
type Provider struct {
	Name string
	// Help is the one line --help and the README show.
	Help string
	// Env are the variables the provider reads.
	Env []Env
	// PreCheck says what the pre-flight check verifies before any scenario sends a
	// request ("" when the provider has none); the check itself is the model's Check.
	PreCheck string
	// Parser is the tool-call parser when neither the task nor a flag names one.
	Parser string
	// open builds the client for the model name; nil for replay, which Open handles.
	open func(name string, o OpenOptions, getenv func(string) string) (model.Model, error)
}

// Env is an environment variable a provider reads.
type Env struct {
	Name string
	Help string
}

// Registry holds every provider, sorted by name.
var Registry = []Provider{
	{
		Name: "anthropic", Help: "Anthropic's Messages API",
		Env: []Env{
			{"ANTHROPIC_API_KEY", "its key (required)"},
			{"ANTHROPIC_BASE_URL", "default https://api.anthropic.com"},
		},
		Parser: textcall.Native,
		open: func(name string, o OpenOptions, getenv func(string) string) (model.Model, error) {
			return anthropic.New(anthropic.Config{
				Model: name, BaseURL: getenv("ANTHROPIC_BASE_URL"), APIKey: getenv("ANTHROPIC_API_KEY"),
				Stream: o.Stream, HTTPClient: o.HTTPClient,
			})
		},
	},
	{
		Name: "gemini", Help: "the Gemini API (generateContent)",
		Env: []Env{
			{"GEMINI_API_KEY", "its key (or GOOGLE_API_KEY; one is required)"},
			{"GEMINI_BASE_URL", "default https://generativelanguage.googleapis.com/"},
		},
		Parser: textcall.Native,
		open: func(name string, o OpenOptions, getenv func(string) string) (model.Model, error) {
			key := getenv("GEMINI_API_KEY")
			if key == "" {
				key = getenv("GOOGLE_API_KEY") // the SDK's other name for it
			}
			return gemini.New(gemini.Config{Model: name, BaseURL: getenv("GEMINI_BASE_URL"), APIKey: key, Stream: o.Stream, HTTPClient: o.HTTPClient})
		},
	},
	{
		Name: "ollama", Help: "an Ollama server",
		Env:      []Env{{"OLLAMA_HOST", "default 127.0.0.1:11434"}},
		PreCheck: "the model is pulled and has the tools capability (/api/show)",
		// Small local models write calls as text more often than not.
		Parser: textcall.Auto,
		open: func(name string, o OpenOptions, getenv func(string) string) (model.Model, error) {
			return ollama.New(ollama.Config{Model: name, Host: getenv("OLLAMA_HOST"), Stream: o.Stream, HTTPClient: o.HTTPClient})
		},
	},
	{
		Name: "openai", Help: "any OpenAI-compatible chat completions server",
		Env: []Env{
			{"OPENAI_BASE_URL", "default https://api.openai.com/v1"},
			{"OPENAI_API_KEY", "its key (may be empty for local servers)"},
		},
		Parser: textcall.Native,
		open: func(name string, o OpenOptions, getenv func(string) string) (model.Model, error) {
			return openai.New(openai.Config{
				Model: name, BaseURL: getenv("OPENAI_BASE_URL"), APIKey: getenv("OPENAI_API_KEY"),
				Stream: o.Stream, HTTPClient: o.HTTPClient,
			})
		},
	},
	{
		Name: "openai-responses", Help: "OpenAI's Responses API",
		Env: []Env{
			{"OPENAI_BASE_URL", "default https://api.openai.com/v1"},
			{"OPENAI_API_KEY", "its key (may be empty for local servers)"},
		},
		Parser: textcall.Native,
		open: func(name string, o OpenOptions, getenv func(string) string) (model.Model, error) {
			return openairesponses.New(openairesponses.Config{
				Model: name, BaseURL: getenv("OPENAI_BASE_URL"), APIKey: getenv("OPENAI_API_KEY"),
				Stream: o.Stream, HTTPClient: o.HTTPClient,
			})
		},
	},
	{
		Name: "oracle", Help: "plays the task's reference: calls; no server. oracle:fail=0.3,seed=1 gives up a seeded share of runs",
		Parser: textcall.Native,
		open: func(name string, o OpenOptions, _ func(string) string) (model.Model, error) {
			if name == "" {
				return oracle.New(o.Reference), nil
			}
			flaky, err := oracle.ParseFlaky(name)
			if err != nil {
				return nil, err
			}
			if flaky.GivesUp(o.Scenario, o.Repeat) {
				return oracle.GiveUp("oracle:" + name), nil
			}
			return oracle.NewNamed("oracle:"+name, o.Reference), nil
		},
	},
	{
		Name: "replay", Help: "answers from a cassette recorded with --record (replay:DIR)",
		Parser: textcall.Native,
	},
}

// Known lists the provider names Open accepts.
var Known = func() []string {
	out := make([]string, len(Registry))
	for i, p := range Registry {
		out[i] = p.Name
	}
	return out
}()

// Lookup returns the row of a provider name.
func Lookup(name string) (Provider, bool) {
	for _, p := range Registry {
		if p.Name == name {
			return p, true
		}
	}
	return Provider{}, false
}

// EnvHelp lists the variables of every provider, one per line with the providers that
// read it, as --help shows them.
func EnvHelp(indent string) string {
	var names []string
	help := map[string]string{}
	users := map[string][]string{}
	for _, p := range Registry {
		for _, e := range p.Env {
			if _, ok := help[e.Name]; !ok {
				names = append(names, e.Name)
				help[e.Name] = e.Help
			}
			users[e.Name] = append(users[e.Name], p.Name+":NAME")
		}
	}
	var b strings.Builder
	for _, n := range names {
		fmt.Fprintf(&b, "%s%-20s %s: %s\n", indent, n, strings.Join(users[n], ", "), help[n])
	}
	return strings.TrimSuffix(b.String(), "\n")
}
