package providers

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/agentrunner/runner/runner/model"
	"github.com/agentrunner/runner/runner/model/anthropic"
	"github.com/agentrunner/runner/runner/model/gemini"
	"github.com/agentrunner/runner/runner/model/ollama"
	"github.com/agentrunner/runner/runner/model/openai"
	"github.com/agentrunner/runner/runner/model/openairesponses"
	"github.com/agentrunner/runner/runner/model/oracle"
	"github.com/agentrunner/runner/runner/model/replay"
	"github.com/agentrunner/runner/runner/model/textcall"
	"github.com/agentrunner/runner/runner/scrub"
)

// Provider is one row of the registry: what PROVIDER in PROVIDER:MODEL names, and all
// there is to it. Open, CheckName, the --model help, the environment section of --help,
// the secret scrubber (its variables) and docs/ read Registry; a new provider is its
// package (its client) plus one row. What a provider's models can do beyond a step is
// theirs to say, found behind the wrappers Open puts around them (model.Find): a
// pre-flight check (Checker), a description from the server (Prober), loading and
// placement (Loader).
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
	// CheckName checks the MODEL part of a name without opening it (no client built, no
	// file read), for CheckName; nil when any name may do until Open.
	CheckName func(name string) error
	// Recorded says the provider's answers are a recording's: Open returns its model as it
	// is, with no retries, parser or recorder around it.
	Recorded bool
	// New builds the client for the model name (MODEL of PROVIDER:MODEL), reading the
	// provider's variables through getenv. Open wraps what it returns (see Recorded).
	New func(name string, o OpenOptions, getenv func(string) string) (model.Model, error)
}

// Env is an environment variable a provider reads. Its value is secret where its name
// ends in _KEY, and a URL's user info in it always is (see scrub.AddProviderEnv).
type Env struct {
	Name string
	Help string
	// Also are other names read for the same value (GOOGLE_API_KEY for GEMINI_API_KEY),
	// scrubbed alike.
	Also []string
}

// Registry holds every provider, sorted by name.
var Registry = []Provider{
	{
		Name: "anthropic", Help: "Anthropic's Messages API",
		Env: []Env{
			{Name: "ANTHROPIC_API_KEY", Help: "its key (required)"},
			{Name: "ANTHROPIC_BASE_URL", Help: "default https://api.anthropic.com"},
		},
		Parser: textcall.Native,
		New: func(name string, o OpenOptions, getenv func(string) string) (model.Model, error) {
			return anthropic.New(anthropic.Config{
				Model: name, BaseURL: getenv("ANTHROPIC_BASE_URL"), APIKey: getenv("ANTHROPIC_API_KEY"),
				Stream: o.Stream, HTTPClient: o.HTTPClient,
			})
		},
	},
	{
		Name: "gemini", Help: "the Gemini API (generateContent)",
		Env: []Env{
			{Name: "GEMINI_API_KEY", Help: "its key (or GOOGLE_API_KEY; one is required)", Also: []string{"GOOGLE_API_KEY"}},
			{Name: "GEMINI_BASE_URL", Help: "default https://generativelanguage.googleapis.com/"},
		},
		Parser: textcall.Native,
		New: func(name string, o OpenOptions, getenv func(string) string) (model.Model, error) {
			key := getenv("GEMINI_API_KEY")
			if key == "" {
				key = getenv("GOOGLE_API_KEY") // the SDK's other name for it
			}
			return gemini.New(gemini.Config{Model: name, BaseURL: getenv("GEMINI_BASE_URL"), APIKey: key, Stream: o.Stream, HTTPClient: o.HTTPClient})
		},
	},
	{
		Name: "ollama", Help: "an Ollama server",
		Env:      []Env{{Name: "OLLAMA_HOST", Help: "default 127.0.0.1:11434"}},
		PreCheck: "the model is pulled and has the tools capability (/api/show)",
		// Small local models write calls as text more often than not.
		Parser: textcall.Auto,
		New: func(name string, o OpenOptions, getenv func(string) string) (model.Model, error) {
			return ollama.New(ollama.Config{Model: name, Host: getenv("OLLAMA_HOST"), Stream: o.Stream, HTTPClient: o.HTTPClient})
		},
	},
	{
		Name: "openai", Help: "any OpenAI-compatible chat completions server",
		Env: []Env{
			{Name: "OPENAI_BASE_URL", Help: "default https://api.openai.com/v1"},
			{Name: "OPENAI_API_KEY", Help: "its key (may be empty for local servers)"},
		},
		Parser: textcall.Native,
		New: func(name string, o OpenOptions, getenv func(string) string) (model.Model, error) {
			return openai.New(openai.Config{
				Model: name, BaseURL: getenv("OPENAI_BASE_URL"), APIKey: getenv("OPENAI_API_KEY"),
				Stream: o.Stream, HTTPClient: o.HTTPClient,
			})
		},
	},
	{
		Name: "openai-responses", Help: "OpenAI's Responses API",
		Env: []Env{
			{Name: "OPENAI_BASE_URL", Help: "default https://api.openai.com/v1"},
			{Name: "OPENAI_API_KEY", Help: "its key (may be empty for local servers)"},
		},
		Parser: textcall.Native,
		New: func(name string, o OpenOptions, getenv func(string) string) (model.Model, error) {
			return openairesponses.New(openairesponses.Config{
				Model: name, BaseURL: getenv("OPENAI_BASE_URL"), APIKey: getenv("OPENAI_API_KEY"),
				Stream: o.Stream, HTTPClient: o.HTTPClient,
			})
		},
	},
	{
		Name: "oracle", Help: "plays the task's reference: calls; no server. oracle:fail=0.3,seed=1 gives up a seeded share of runs",
		Parser: textcall.Native,
		CheckName: func(name string) error {
			if name == "" {
				return nil
			}
			_, err := oracle.ParseFlaky(name)
			return err
		},
		New: func(name string, o OpenOptions, _ func(string) string) (model.Model, error) {
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
		Parser:   textcall.Native,
		Recorded: true,
		New: func(dir string, o OpenOptions, getenv func(string) string) (model.Model, error) {
			if dir == "" {
				return nil, errors.New("name the cassette directory: replay:DIR")
			}
			if o.Record != "" {
				return nil, errors.New("cannot record a replay")
			}
			c, err := openCassette(dir, getenv)
			if err != nil {
				return nil, err
			}
			return replay.Play(c, "", o.Scenario), nil
		},
	},
}

func init() {
	for _, p := range Registry {
		scrub.AddProviderVariables(p.variables()...)
	}
}

// Register adds a row to Registry, in name order, and tells the secret scrubber its
// variables: a provider defined outside the table (a test's, a build's own). It is for
// init functions and tests, before anything opens a model; a name already registered
// panics, as a second database/sql driver of one name does.
func Register(p Provider) {
	i, found := slices.BinarySearchFunc(Registry, p.Name, func(row Provider, name string) int { return strings.Compare(row.Name, name) })
	if found {
		panic("providers: Register of " + p.Name + " twice")
	}
	Registry = slices.Insert(slices.Clone(Registry), i, p)
	scrub.AddProviderVariables(p.variables()...)
}

// variables are the names of the variables the provider reads.
func (p Provider) variables() []string {
	var out []string
	for _, e := range p.Env {
		out = append(out, e.Name)
		out = append(out, e.Also...)
	}
	return out
}

// Names lists the provider names Open accepts, in order.
func Names() []string {
	out := make([]string, len(Registry))
	for i, p := range Registry {
		out[i] = p.Name
	}
	return out
}

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
