package endpoint_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"gotest.tools/v3/assert"

	"github.com/agentrunner/runner/runner/endpoint"
	"github.com/agentrunner/runner/runner/model"
	"github.com/agentrunner/runner/runner/transcript"
)

// The attack of an agent that cannot make runner's reading of one body fail (each is
// bounded) and so sends many at once: 12 requests of 32 MiB each, under the size cap,
// all in flight together, to one scenario's endpoint. Read all at once they held about
// 1 GB (24 of 60 MiB: 3.1 GB), and more of them would have runner killed for memory with
// every scenario of the run (errored, not failed). The endpoint holds a bounded amount
// of request bodies at a time; the others wait their turn.
func TestRequestFloodIsReadABoundedAmountAtATime(t *testing.T) {
	t.Parallel()
	const each, n = 32 << 20, 12
	srv, base := serve(t, endpoint.Config{Model: forgetful{}, MaxSteps: 1000, Record: discard{}})
	head := `{"model":"m","messages":[{"role":"user","content":"`
	tail := `"}]}`
	var peak atomic.Uint64
	stop := make(chan struct{})
	sampled := make(chan struct{})
	go func() { // the heap's high-water mark while the requests are read
		defer close(sampled)
		var m runtime.MemStats
		for {
			runtime.ReadMemStats(&m)
			if m.HeapInuse > peak.Load() {
				peak.Store(m.HeapInuse)
			}
			select {
			case <-stop:
				return
			case <-time.After(5 * time.Millisecond):
			}
		}
	}()
	var wg sync.WaitGroup
	var answered atomic.Int32
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			body := io.MultiReader(strings.NewReader(head), io.LimitReader(filled('a'), each-int64(len(head)+len(tail))), strings.NewReader(tail))
			req, err := http.NewRequest(http.MethodPost, base+"/v1/chat/completions", body)
			if err != nil {
				t.Error(err)
				return
			}
			req.ContentLength = each
			req.Header.Set("Authorization", "Bearer "+srv.Token())
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Error(err)
				return
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				answered.Add(1)
			}
		}()
	}
	wg.Wait()
	close(stop)
	<-sampled
	t.Logf("peak heap in use: %d MiB for %d requests of %d MiB", peak.Load()>>20, n, each>>20)
	assert.Equal(t, int(answered.Load()), n, "every request is answered in turn")
	assert.Check(t, peak.Load() < 512<<20, "peak heap in use %d MiB", peak.Load()>>20)
}

// forgetful answers every request and keeps none, as a provider does.
type forgetful struct{}

func (forgetful) Name() string { return "fake:forgetful" }
func (forgetful) Step(context.Context, *model.Request) (*model.Response, error) {
	return &model.Response{Content: "ok"}, nil
}

// discard is a recorder that keeps nothing (runner's writes each event to disk).
type discard struct{}

func (discard) Write(int, transcript.Payload) error { return nil }

// filled is an endless reader of one byte, copied a block at a time (a loop per byte is
// slow under the race detector).
type filled byte

func (f filled) Read(p []byte) (int, error) {
	block := bytes.Repeat([]byte{byte(f)}, min(len(p), 64<<10))
	n := 0
	for n < len(p) {
		n += copy(p[n:], block)
	}
	return n, nil
}
