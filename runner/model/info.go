package model

import (
	"fmt"

	"github.com/agentrunner/runner/runner/result"
)

// Info is what a model server says about a model before it is used (Ollama's /api/show,
// /api/tags, /api/ps and /api/version), recorded with benchmark results so they can be
// compared.
type Info struct {
	// Family, ParameterSize ("7.6B") and Quantization ("Q4_K_M") come from the details.
	Family        string `json:"family,omitempty"`
	ParameterSize string `json:"parameter_size,omitempty"`
	Quantization  string `json:"quantization,omitempty"`
	// ContextLength is the longest context the model supports (model_info).
	ContextLength int `json:"context_length,omitempty"`
	// LoadedContext is the context (num_ctx) the loaded model runs with (/api/ps): a
	// prompt longer than that is truncated silently.
	LoadedContext int `json:"loaded_context,omitempty"`
	// Digest identifies the exact weights.
	Digest string `json:"digest,omitempty"`
	// ServerVersion is the server's own version (/api/version): the same weights run
	// differently on another server version.
	ServerVersion string   `json:"server_version,omitempty"`
	Capabilities  []string `json:"capabilities,omitempty"`
	// Tools is true when the model supports tool calling.
	Tools bool `json:"tools"`
}

// Placement is where a server holds a loaded model (Ollama's /api/ps): how much of it
// is in GPU memory, and the context it was loaded with. Two placements that differ are
// two loads: the server loaded the model again in between.
type Placement struct {
	// Size is the bytes the loaded model takes (weights, KV cache and compute graph).
	Size int64 `json:"size"`
	// SizeVRAM is the part of Size in GPU memory: Size means fully offloaded, 0 on CPU.
	SizeVRAM int64 `json:"size_vram"`
	// ContextLength is the context of one request (num_ctx) the model was loaded with.
	// The server allocates it once per parallel slot.
	ContextLength int `json:"context_length,omitempty"`
}

// GPUShare is the part of the model in GPU memory, 0 to 1.
func (p Placement) GPUShare() float64 {
	if p.Size <= 0 {
		return 0
	}
	return float64(p.SizeVRAM) / float64(p.Size)
}

// Split reports whether the model is partly on CPU and partly on GPU: the layers on
// CPU make every token wait for them.
func (p Placement) Split() bool { return p.SizeVRAM > 0 && p.SizeVRAM < p.Size }

// OnCPU reports whether any of the model is on CPU.
func (p Placement) OnCPU() bool { return p.SizeVRAM < p.Size }

// Processor is the placement as `ollama ps` shows it: "100% GPU", "100% CPU",
// "25%/75% CPU/GPU".
func (p Placement) Processor() string {
	switch {
	case p.Size <= 0:
		return "unknown"
	case p.SizeVRAM <= 0:
		return "100% CPU"
	case p.SizeVRAM >= p.Size:
		return "100% GPU"
	}
	gpu := int(100*p.GPUShare() + 0.5)
	return fmt.Sprintf("%d%%/%d%% CPU/GPU", 100-gpu, gpu)
}

// Load is one load of a model that runner asked a server for (runner bench loads each
// model itself, once per set of options that forces the server to load it again, so
// that no cell's time holds a load).
type Load struct {
	// NumCtx is the context asked for (model_options.num_ctx; 0: the model's default).
	NumCtx int `json:"num_ctx,omitempty"`
	// Loaded is true when the server loaded the model for the request: before it,
	// /api/ps did not list the model, or listed it loaded otherwise. False when the
	// model was already loaded so.
	Loaded bool `json:"loaded"`
	// Duration is the load request's time: what a cell would have waited (Ollama's
	// answer to a load carries no load_duration).
	Duration result.Millis `json:"load_ms"`
	// Placement is where the model was afterwards (nil when the server does not say).
	Placement *Placement `json:"placement,omitempty"`
}

// GPU is one device a model server found, as it reports it.
type GPU struct {
	ID string `json:"id,omitempty"`
	// Name is the device's product name ("NVIDIA H200"; "cpu" for the CPU).
	Name    string `json:"name"`
	Library string `json:"library,omitempty"` // CUDA, ROCm, Metal, cpu
	Compute string `json:"compute,omitempty"` // compute capability
	Driver  string `json:"driver,omitempty"`
	// Memory is its total memory as the server prints it ("139.8 GiB").
	Memory string `json:"memory,omitempty"`
}
