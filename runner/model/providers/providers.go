// Package providers turns a PROVIDER:MODEL name into a ready model.Model, wrapped with
// retries, and runs the provider's pre-flight check.
package providers

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/agentrunner/runner/runner/model"
	"github.com/agentrunner/runner/runner/model/replay"
	"github.com/agentrunner/runner/runner/model/retry"
	"github.com/agentrunner/runner/runner/model/textcall"
	"github.com/agentrunner/runner/runner/scrub"
)

// DefaultRequestTimeout bounds one model request when OpenOptions leaves it 0: long
// enough for a local model on a CPU to answer a long conversation.
const DefaultRequestTimeout = 5 * time.Minute

// OpenOptions configure Open.
type OpenOptions struct {
	// Reference holds the task's reference calls, played by "oracle".
	Reference []model.ToolCall
	// Stream asks providers for streamed responses.
	Stream bool
	// RequestTimeout bounds each request (default DefaultRequestTimeout; <0 means none).
	RequestTimeout time.Duration
	// Retries is the number of attempts per step (default retry.DefaultAttempts).
	Retries int
	// HTTPClient, when set, sends the requests (tests; proxies).
	HTTPClient *http.Client
	// Getenv reads the providers' variables: OLLAMA_HOST, OPENAI_BASE_URL,
	// OPENAI_API_KEY, ANTHROPIC_BASE_URL, ANTHROPIC_API_KEY, ... (default os.Getenv).
	Getenv func(string) string
	// Retry overrides the backoff (tests inject Sleep and Rand); Attempts and
	// RequestTimeout above take precedence over its fields when set.
	Retry retry.Options
	// Record, when set, is a cassette directory where every response is stored (--record).
	Record string
	// Replay, when set, is a cassette directory that answers in place of the model
	// (--replay): nothing reaches a server.
	Replay string
	// Scenario names the scenario the model is opened for, in cassettes and replay misses.
	Scenario string
	// Repeat is the run's number among the task's repeats, from 1 (a seeded oracle decides by it).
	Repeat int
	// ToolCallParser reads tool calls written as text: a textcall mode, "" for the
	// provider's default (Provider.Parser).
	ToolCallParser string
}

// Split parses "PROVIDER:MODEL". Model names may hold colons (ollama:qwen3:4b), so it
// splits on the first one.
func Split(spec string) (provider, name string) {
	provider, name, _ = strings.Cut(strings.TrimSpace(spec), ":")
	return strings.ToLower(provider), name
}

// Open returns the model named by spec, wrapped with retries and a request timeout.
func Open(spec string, o OpenOptions) (model.Model, error) {
	getenv := o.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	// Whatever credential the model is opened with is scrubbed from every output, whoever
	// echoes it (a server's error body, a gateway's 200, a streamed chunk).
	scrub.AddProviderEnv(getenv)
	provider, name := Split(spec)
	if err := textcall.Check(o.ToolCallParser); err != nil {
		return nil, err
	}
	if o.Replay != "" && provider != "replay" {
		if _, known := Lookup(provider); !known {
			return nil, unknownProvider(spec, provider)
		}
		c, err := openCassette(o.Replay, getenv)
		if err != nil {
			return nil, fmt.Errorf("replay cassette: %w", err)
		}
		return replay.Play(c, spec, o.Scenario), nil
	}
	if err := checkProvider(spec, provider); err != nil {
		return nil, err
	}
	row, _ := Lookup(provider)
	m, err := row.New(name, o, getenv)
	if err != nil {
		return nil, fmt.Errorf("model %q: %w", spec, err)
	}
	if row.Recorded {
		return m, nil
	}
	return wrap(m, row, o, getenv)
}

// wrap puts around a provider's model what every run's model gets: retries with a
// request timeout, the tool-call parser, and the recorder of --record.
func wrap(m model.Model, row Provider, o OpenOptions, getenv func(string) string) (model.Model, error) {
	ro := o.Retry
	if o.Retries > 0 {
		ro.Attempts = o.Retries
	}
	switch {
	case o.RequestTimeout > 0:
		ro.RequestTimeout = o.RequestTimeout
	case o.RequestTimeout == 0 && ro.RequestTimeout == 0:
		ro.RequestTimeout = DefaultRequestTimeout
	case o.RequestTimeout < 0:
		ro.RequestTimeout = 0
	}
	m = retry.Wrap(m, ro)
	parser := o.ToolCallParser
	if parser == "" {
		parser = row.Parser
	}
	// The parser sits inside the recorder: a cassette holds the calls as the run saw
	// them, so a replay gives the same transcript whatever parser it is run with.
	m = textcall.Wrap(m, parser)
	if o.Record != "" {
		if err := os.MkdirAll(o.Record, 0o755); err != nil {
			return nil, fmt.Errorf("record cassette: %w", err)
		}
		c, err := replay.Open(o.Record, getenv)
		if err != nil {
			return nil, fmt.Errorf("record cassette: %w", err)
		}
		m = replay.Record(m, c, o.Scenario)
	}
	return m, nil
}

// openCassette opens a cassette to play, which must hold recordings.
func openCassette(dir string, getenv func(string) string) (*replay.Cassette, error) {
	c, err := replay.Open(dir, getenv)
	if err != nil {
		return nil, err
	}
	if len(c.Models()) == 0 {
		return nil, &EmptyCassetteError{Dir: dir}
	}
	return c, nil
}

// EmptyCassetteError: a cassette to play holds no recordings (no index file). The
// command line says how to record one.
type EmptyCassetteError struct{ Dir string }

func (e *EmptyCassetteError) Error() string {
	return fmt.Sprintf("cassette %s holds no recordings (no %s)", e.Dir, replay.IndexFile)
}

// Checker is a model with a pre-flight check (Ollama: the model is pulled and has tools).
type Checker interface {
	Check(ctx context.Context) error
}

// Check runs m's pre-flight check, looking through wrappers; models without one pass.
func Check(ctx context.Context, m model.Model) error {
	if c, ok := model.Find[Checker](m); ok {
		return model.Redacted(c.Check(ctx)) // messages name the server, with its user info
	}
	return nil
}

// Prober is a model whose server can describe it (Ollama's /api/show).
type Prober interface {
	Probe(ctx context.Context) (model.Info, error)
}

// Loader is a model whose server loads it on request and says where it holds it
// (Ollama: a chat without messages, and /api/ps).
type Loader interface {
	Load(ctx context.Context, opts model.Options) (model.Load, error)
	Placement(ctx context.Context) (*model.Placement, error)
}

// Probe describes m through its server, looking through wrappers. Models without a
// prober run their pre-flight check and return nil.
func Probe(ctx context.Context, m model.Model) (*model.Info, error) {
	if p, ok := model.Find[Prober](m); ok {
		info, err := p.Probe(ctx)
		if err != nil {
			return nil, model.Redacted(err)
		}
		return &info, nil
	}
	return nil, Check(ctx, m)
}

// FindLoader returns m's Loader, looking through wrappers; false for providers whose
// models need no loading.
func FindLoader(m model.Model) (Loader, bool) { return model.Find[Loader](m) }
