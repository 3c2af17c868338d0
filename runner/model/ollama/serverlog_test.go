package ollama_test

import (
	"strings"
	"testing"

	"gotest.tools/v3/assert"

	"github.com/agentrunner/runner/runner/model"
	"github.com/agentrunner/runner/runner/model/ollama"
)

// A server's log as Ollama 0.17.4 writes it: the CPU-only lines are copied from the real
// server (tests/ollama runs it); the GPU line has the fields discover/types.go logs, in
// its order, with an H200's values.
const cpuLog = `time=2026-11-28T04:33:03.591Z level=INFO source=types.go:60 msg="inference compute" id=cpu library=cpu compute="" name=cpu description=cpu libdirs=ollama driver="" pci_id="" type="" total="23.5 GiB" available="22.9 GiB"
time=2026-11-28T04:33:20.001Z level=INFO source=server.go:498 msg="loading model" "model layers"=2 requested=-1
time=2026-11-28T04:33:20.058Z level=INFO source=runner.go:895 msg=load request="{Operation:commit LoraPath:[] Parallel:2 BatchSize:512 FlashAttention:Auto KvSize:8192 KvCacheType: NumThreads:2 GPULayers:[] MultiUserCache:false ProjectorPath: MainGPU:0 UseMmap:false}"
load_tensors: loading model tensors, this can take a while... (mmap = false)
time=2026-11-28T04:33:31.100Z level=INFO source=server.go:498 msg="loading model" "model layers"=2 requested=-1
`

const gpuLog = `time=2026-11-28T04:00:00.000Z level=INFO source=types.go:42 msg="inference compute" id=GPU-8f1c filter_id="" library=CUDA compute=9.0 name=CUDA0 description="NVIDIA H200" libdirs=ollama,cuda_v12 driver=12.8 pci_id=0000:19:00.0 type=discrete total="139.8 GiB" available="139.2 GiB"
`

func TestReadServerLog(t *testing.T) {
	l, err := ollama.ReadServerLog(strings.NewReader(cpuLog))
	assert.NilError(t, err)
	assert.DeepEqual(t, l.GPUs, []model.GPU{{ID: "cpu", Name: "cpu", Library: "cpu", Memory: "23.5 GiB"}})
	assert.Equal(t, l.Loads, 2, "the tensors line of llama.cpp is no load of the server")
	assert.Equal(t, l.Parallel, 2)
	assert.Equal(t, l.KVSize, 8192)

	// A restarted server prints a new inventory: the last one counts.
	l, err = ollama.ReadServerLog(strings.NewReader(cpuLog + gpuLog))
	assert.NilError(t, err)
	assert.DeepEqual(t, l.GPUs, []model.GPU{{ID: "GPU-8f1c", Name: "NVIDIA H200", Library: "CUDA", Compute: "9.0", Driver: "12.8", Memory: "139.8 GiB"}})

	// Not a log: nothing, no error.
	l, err = ollama.ReadServerLog(strings.NewReader("msg=\"loading model\"\n\x00\x01 time=\"\n"))
	assert.NilError(t, err)
	assert.DeepEqual(t, l, ollama.ServerLog{})
}
