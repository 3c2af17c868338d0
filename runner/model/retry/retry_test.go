package retry

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"gotest.tools/v3/assert"

	"github.com/agentrunner/runner/runner/model"
)

// scripted returns the errors in order, then success.
type scripted struct {
	mu    sync.Mutex
	errs  []error
	calls int
	block bool // wait for ctx instead of answering
}

func (s *scripted) Name() string { return "fake:m" }

func (s *scripted) Step(ctx context.Context, _ *model.Request) (*model.Response, error) {
	s.mu.Lock()
	i := s.calls
	s.calls++
	s.mu.Unlock()
	if s.block {
		<-ctx.Done()
		return nil, ctx.Err()
	}
	if i < len(s.errs) {
		return nil, s.errs[i]
	}
	return &model.Response{Content: "ok"}, nil
}

type sleeps struct {
	mu sync.Mutex
	d  []time.Duration
}

func (s *sleeps) sleep(ctx context.Context, d time.Duration) error {
	s.mu.Lock()
	s.d = append(s.d, d)
	s.mu.Unlock()
	return ctx.Err()
}

func temp(status int, ra time.Duration) error {
	return model.HTTPError("fake", "h:1", status, "server says no", ra, nil)
}

func TestStepRetries(t *testing.T) {
	conn := model.TransportError("fake", "h:1", errors.New("read: connection reset by peer"))
	malformed := model.TransportError("fake", "h:1", errors.New("invalid character '<'"))
	tests := []struct {
		name      string
		errs      []error
		wantCalls int
		wantErr   string
		wantSleep []time.Duration
	}{
		{name: "success", wantCalls: 1},
		{name: "500 then success", errs: []error{temp(500, 0)}, wantCalls: 2, wantSleep: []time.Duration{75 * time.Millisecond}},
		{name: "connection error then success", errs: []error{conn, conn}, wantCalls: 3,
			wantSleep: []time.Duration{75 * time.Millisecond, 150 * time.Millisecond}},
		{name: "429 honours Retry-After", errs: []error{temp(429, 3*time.Second)}, wantCalls: 2,
			wantSleep: []time.Duration{3 * time.Second}},
		{name: "Retry-After is capped", errs: []error{temp(429, time.Hour)}, wantCalls: 2,
			wantSleep: []time.Duration{10 * time.Second}},
		{name: "400 is not retried", errs: []error{temp(400, 0)}, wantCalls: 1,
			wantErr: "model fake:m: fake at h:1: HTTP 400 Bad Request: server says no"},
		{name: "malformed body is not retried", errs: []error{malformed}, wantCalls: 1,
			wantErr: "invalid character"},
		{name: "plain error is not retried", errs: []error{errors.New("boom")}, wantCalls: 1, wantErr: "boom"},
		{name: "gives up after attempts", errs: []error{temp(503, 0), temp(503, 0), temp(503, 0), temp(503, 0)},
			wantCalls: 4, wantErr: "model fake:m: gave up after 4 attempts: fake at h:1: HTTP 503 Service Unavailable: server says no",
			wantSleep: []time.Duration{75 * time.Millisecond, 150 * time.Millisecond, 150 * time.Millisecond}}, // capped at 200ms, jittered
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			inner := &scripted{errs: tc.errs}
			sl := &sleeps{}
			m := Wrap(inner, Options{
				BaseDelay: 100 * time.Millisecond, MaxDelay: 200 * time.Millisecond, MaxRetryAfter: 10 * time.Second,
				Sleep: sl.sleep, Rand: func() float64 { return 0.5 },
			})
			resp, err := m.Step(context.Background(), &model.Request{})
			assert.Equal(t, inner.calls, tc.wantCalls)
			assert.DeepEqual(t, sl.d, tc.wantSleep)
			if tc.wantErr == "" {
				assert.NilError(t, err)
				assert.Equal(t, resp.Content, "ok")
				return
			}
			assert.ErrorContains(t, err, tc.wantErr)
			var re *Error
			assert.Assert(t, errors.As(err, &re))
			assert.Equal(t, re.Attempts, tc.wantCalls)
		})
	}
}

func TestJitterStaysInHalfToFull(t *testing.T) {
	for _, r := range []float64{0, 0.999} {
		m := Wrap(&scripted{}, Options{BaseDelay: time.Second, MaxDelay: time.Minute, Rand: func() float64 { return r }})
		for attempt, full := range []time.Duration{time.Second, 2 * time.Second, 4 * time.Second} {
			d := m.backoff(attempt+1, nil)
			assert.Assert(t, d >= full/2 && d <= full, "attempt %d: %s not in [%s, %s]", attempt+1, d, full/2, full)
		}
	}
}

func TestNotifyReportsEachRetry(t *testing.T) {
	inner := &scripted{errs: []error{temp(500, 0), temp(429, 0)}}
	m := Wrap(inner, Options{BaseDelay: time.Millisecond, Sleep: (&sleeps{}).sleep})
	var events []Event
	ctx := WithNotify(context.Background(), func(e Event) { events = append(events, e) })
	_, err := m.Step(ctx, &model.Request{})
	assert.NilError(t, err)
	assert.Equal(t, len(events), 2)
	assert.Equal(t, events[0].Attempt, 1)
	assert.ErrorContains(t, events[1].Err, "429")
}

func TestCancelStopsDuringBackoff(t *testing.T) {
	inner := &scripted{errs: []error{temp(500, 0), temp(500, 0)}}
	ctx, cancel := context.WithCancel(context.Background())
	m := Wrap(inner, Options{BaseDelay: time.Hour, MaxDelay: time.Hour}) // the real sleep
	go func() {
		time.Sleep(20 * time.Millisecond)
		cancel()
	}()
	start := time.Now()
	_, err := m.Step(ctx, &model.Request{})
	assert.Assert(t, errors.Is(err, context.Canceled), "%v", err)
	assert.Assert(t, time.Since(start) < 5*time.Second)
	assert.Equal(t, inner.calls, 1)
}

func TestCancelledContextIsNotRetried(t *testing.T) {
	inner := &scripted{block: true}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	sl := &sleeps{}
	m := Wrap(inner, Options{Sleep: sl.sleep})
	_, err := m.Step(ctx, &model.Request{})
	assert.Assert(t, errors.Is(err, context.DeadlineExceeded), "%v", err)
	assert.Equal(t, inner.calls, 1)
	assert.Equal(t, len(sl.d), 0)
}

func TestRequestTimeoutIsRetriedThenReported(t *testing.T) {
	inner := &scripted{block: true}
	sl := &sleeps{}
	m := Wrap(inner, Options{Attempts: 2, RequestTimeout: 10 * time.Millisecond, BaseDelay: time.Millisecond, Sleep: sl.sleep})
	_, err := m.Step(context.Background(), &model.Request{})
	assert.ErrorContains(t, err, "gave up after 2 attempts")
	assert.ErrorContains(t, err, "request timed out after 10ms")
	assert.Equal(t, inner.calls, 2)
	assert.Assert(t, errors.Is(err, context.DeadlineExceeded))
	assert.Assert(t, !strings.Contains(err.Error(), "%!"))
}

// Names knows the wrapper's own errors, which start with the model's name, and nothing
// that merely wraps one behind other text.
func TestNamesTheModel(t *testing.T) {
	own := &Error{Model: "ollama:x", Attempts: 1, Err: errors.New("boom")}
	if !Names(own, "ollama:x") || Names(own, "ollama:y") {
		t.Errorf("Names(%v) is wrong about its own model", own)
	}
	cut := &namedError{model: "ollama:x", err: context.Canceled}
	if !Names(cut, "ollama:x") || cut.Error() != "model ollama:x: context canceled" {
		t.Errorf("Names(%v) = false, or its message changed", cut)
	}
	if Names(fmt.Errorf("record: %w", own), "ollama:x") {
		t.Error("an error with text before the name does not name the model first")
	}
}
