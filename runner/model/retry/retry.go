// Package retry wraps any model.Model with a per-request timeout and exponential backoff
// with jitter, so a flaky server (a dropped connection, 429, 5xx) costs a pause instead of
// a scenario, while a request the server will never accept (other 4xx, a body that does
// not parse) fails at once.
package retry

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/agentrunner/runner/runner/model"
)

// Defaults for Options' zero values.
const (
	DefaultAttempts      = 4
	DefaultBaseDelay     = 500 * time.Millisecond
	DefaultMaxDelay      = 20 * time.Second
	DefaultMaxRetryAfter = 60 * time.Second
)

// Options configure the wrapper. The zero value gives the defaults and no request timeout.
type Options struct {
	// Attempts is the total number of tries per step (default 4).
	Attempts int
	// RequestTimeout bounds each attempt; 0 means only the caller's context bounds it.
	RequestTimeout time.Duration
	// BaseDelay is the first backoff; each retry doubles it up to MaxDelay.
	BaseDelay time.Duration
	MaxDelay  time.Duration
	// MaxRetryAfter caps how long a server's Retry-After can make us wait.
	MaxRetryAfter time.Duration
	// Sleep waits d or until ctx is done (tests inject a recorder). Default: a timer.
	Sleep func(ctx context.Context, d time.Duration) error
	// Rand returns a float in [0,1) for jitter. Default: math/rand/v2.
	Rand func() float64
}

// Event describes one failed attempt that will be retried.
type Event struct {
	// Attempt is the 1-based number of the attempt that failed.
	Attempt int
	// Err is why it failed.
	Err error
	// Delay is how long the wrapper waits before the next attempt.
	Delay time.Duration
}

type notifyKey struct{}

// WithNotify returns a context under which every retry of a Step is reported to fn (the
// agent loop writes them to the scenario's transcript). One wrapped model can serve many
// scenarios at once, so the observer travels with the call, not with the model.
func WithNotify(ctx context.Context, fn func(Event)) context.Context {
	return context.WithValue(ctx, notifyKey{}, fn)
}

// Error is the failure of a step after every attempt, or of one that cannot be retried.
type Error struct {
	// Model is the PROVIDER:MODEL name.
	Model string
	// Attempts is how many requests were made.
	Attempts int
	// Err is the last attempt's error (usually a *model.ProviderError).
	Err error
}

func (e *Error) Error() string {
	if e.Attempts == 1 {
		return fmt.Sprintf("model %s: %v", e.Model, e.Err)
	}
	return fmt.Sprintf("model %s: gave up after %d attempts: %v", e.Model, e.Attempts, e.Err)
}

// Unwrap returns the last attempt's error.
func (e *Error) Unwrap() error { return e.Err }

// namedError is a step that ended before its attempts did (an interrupt, or a wait for
// the next attempt cut short): "model NAME: err" and a note.
type namedError struct {
	model, note string
	err         error
}

func (e *namedError) Error() string { return fmt.Sprintf("model %s: %v%s", e.model, e.err, e.note) }
func (e *namedError) Unwrap() error { return e.err }

// Names reports whether err is an error of the retry wrapper of the model name, whose
// message starts "model NAME: ". Only err itself counts, not what it wraps: a wrapper
// that put text in front of the name would hide it.
func Names(err error, name string) bool {
	switch e := err.(type) { //nolint:errorlint // the message's start, so err itself
	case *Error:
		return e.Model == name
	case *namedError:
		return e.model == name
	}
	return false
}

// Model is a model.Model with retries.
type Model struct {
	inner model.Model
	o     Options
}

// Wrap returns m with retries and timeouts.
func Wrap(m model.Model, o Options) *Model {
	if o.Attempts <= 0 {
		o.Attempts = DefaultAttempts
	}
	if o.BaseDelay <= 0 {
		o.BaseDelay = DefaultBaseDelay
	}
	if o.MaxDelay <= 0 {
		o.MaxDelay = DefaultMaxDelay
	}
	if o.MaxRetryAfter <= 0 {
		o.MaxRetryAfter = DefaultMaxRetryAfter
	}
	if o.Sleep == nil {
		o.Sleep = sleep
	}
	if o.Rand == nil {
		o.Rand = rand.Float64
	}
	return &Model{inner: m, o: o}
}

// Name returns the wrapped model's name.
func (m *Model) Name() string { return m.inner.Name() }

// Unwrap returns the wrapped model (for pre-flight checks).
func (m *Model) Unwrap() model.Model { return m.inner }

// Step calls the wrapped model until it succeeds, fails for good, runs out of attempts or
// ctx ends. Cancelling ctx stops at once, also during a backoff.
func (m *Model) Step(ctx context.Context, req *model.Request) (*model.Response, error) {
	notify, _ := ctx.Value(notifyKey{}).(func(Event))
	for attempt := 1; ; attempt++ {
		resp, err := m.attempt(ctx, req)
		if err == nil {
			return resp, nil
		}
		if ctx.Err() != nil {
			return nil, &namedError{model: m.Name(), err: context.Cause(ctx)}
		}
		var pe *model.ProviderError
		temporary := errors.As(err, &pe) && pe.Temporary
		if !temporary || attempt >= m.o.Attempts {
			return nil, &Error{Model: m.Name(), Attempts: attempt, Err: err}
		}
		delay := m.backoff(attempt, pe)
		if notify != nil {
			notify(Event{Attempt: attempt, Err: err, Delay: delay})
		}
		if err := m.o.Sleep(ctx, delay); err != nil {
			return nil, &namedError{model: m.Name(), err: err, note: fmt.Sprintf(" (while waiting to retry after: %v)", pe)}
		}
	}
}

// attempt makes one request under the per-request timeout. A timeout of the attempt (not
// of the caller) becomes a temporary ProviderError, like a connection that hung.
func (m *Model) attempt(ctx context.Context, req *model.Request) (*model.Response, error) {
	if m.o.RequestTimeout <= 0 {
		return m.inner.Step(ctx, req)
	}
	actx, cancel := context.WithTimeout(ctx, m.o.RequestTimeout)
	defer cancel()
	resp, err := m.inner.Step(actx, req)
	if err != nil && ctx.Err() == nil && actx.Err() != nil {
		pe := &model.ProviderError{
			Message:   fmt.Sprintf("request timed out after %s", m.o.RequestTimeout),
			Temporary: true,
			Err:       err,
		}
		var inner *model.ProviderError
		if errors.As(err, &inner) {
			pe.Provider, pe.Host = inner.Provider, inner.Host
		} else {
			pe.Provider = m.Name()
		}
		return nil, pe
	}
	return resp, err
}

// backoff is BaseDelay·2^(attempt-1), capped, with "equal jitter" (half fixed, half
// random) so parallel scenarios do not retry in lockstep. A server's Retry-After wins
// when it is longer, capped by MaxRetryAfter.
func (m *Model) backoff(attempt int, pe *model.ProviderError) time.Duration {
	d := m.o.BaseDelay
	for i := 1; i < attempt && d < m.o.MaxDelay; i++ {
		d *= 2
	}
	d = min(d, m.o.MaxDelay)
	d = d/2 + time.Duration(m.o.Rand()*float64(d/2))
	if pe != nil && pe.RetryAfter > 0 {
		d = max(d, min(pe.RetryAfter, m.o.MaxRetryAfter))
	}
	return d
}

func sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return context.Cause(ctx)
	case <-t.C:
		return nil
	}
}
