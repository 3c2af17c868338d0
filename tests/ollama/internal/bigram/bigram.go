// Package bigram writes a tiny, deterministic llama model as GGUF (through Ollama's own
// fs/ggml writer), for end-to-end tests against the real Ollama server.
//
// The model is a bigram table: its layers' attention and feed-forward outputs are zero,
// so the residual stream carries the last token's one-hot embedding straight to the
// output matrix, which maps token i to next(i) with a logit gap of ~140 or more.
// Whatever the temperature, the token after i is always next(i). A Shape gives it a real
// model's layers, width, heads and vocabulary (Shapes): the extra weights are small
// non-zero values, so every step computes what such a model computes, and only the
// blocks' output projections are zero, so the answers stay the bigram's. The vocabulary is byte-level BPE
// (gpt2: all 256 byte tokens) plus whole strings as single user-defined tokens. A chat
// template ends the prompt with a marker token chosen by the conversation's state, and
// the chain of tokens after that marker is the model's answer; every other token is
// followed by the end token.
package bigram

import (
	"fmt"
	"io"
	"math"
	"os"
	"slices"

	"github.com/ollama/ollama/fs/ggml"
)

// Chain is one answer: after Marker (a user-defined token the template writes) the model
// generates Pieces, one token each, then the end token.
type Chain struct {
	Marker string
	Pieces []string
}

// Model is the whole model: its chains and trained context length.
type Model struct {
	Chains []Chain
	// ContextLength is the trained context length /api/show reports (default 4096).
	ContextLength int
}

// Token types of tokenizer.ggml.token_type (llama.cpp's llama_token_type).
const (
	typeNormal      = 1
	typeControl     = 3
	typeUserDefined = 4
)

// Vocabulary layout: BOS, EOS, the 256 byte tokens, one merged token, then the strings.
const (
	bos       = 0
	eos       = 1
	firstByte = 2
	merged    = firstByte + 256
	firstUser = merged + 1
)

// gap is the output weight of a transition; times sqrt(width) (the final RMS norm's
// scale of a one-hot vector) it is the logit gap: 8*sqrt(320) ~ 143.
const gap = 8

// Vocab returns the tokens, their types, and next: each token's successor.
func (m Model) Vocab() (tokens []string, types []int32, next []int, err error) {
	tokens = append(tokens, "<s>", "</s>")
	types = append(types, typeControl, typeControl)
	for _, r := range byteRunes() {
		tokens = append(tokens, string(r))
		types = append(types, typeNormal)
	}
	// llama.cpp refuses a gpt2 tokenizer without merges: one harmless merge (two spaces).
	tokens = append(tokens, "ĠĠ")
	types = append(types, typeNormal)
	index := map[string]int{}
	for i, t := range tokens {
		index[t] = i
	}
	add := func(s string) (int, error) {
		if _, dup := index[s]; dup {
			return 0, fmt.Errorf("bigram: token %q appears twice: every marker and piece must be unique, since a token has one successor", s)
		}
		if s == "" {
			return 0, fmt.Errorf("bigram: empty token")
		}
		index[s] = len(tokens)
		tokens = append(tokens, s)
		types = append(types, typeUserDefined)
		return index[s], nil
	}
	type edge struct{ from, to int }
	var edges []edge
	for _, c := range m.Chains {
		prev, err := add(c.Marker)
		if err != nil {
			return nil, nil, nil, err
		}
		for _, p := range c.Pieces {
			id, err := add(p)
			if err != nil {
				return nil, nil, nil, err
			}
			edges = append(edges, edge{prev, id})
			prev = id
		}
		edges = append(edges, edge{prev, eos})
	}
	next = make([]int, len(tokens))
	for i := range next {
		next[i] = eos
	}
	for _, e := range edges {
		next[e.from] = e.to
	}
	return tokens, types, next, nil
}

// Shape is a model's architecture: what a step costs, whatever it answers. The zero
// Shape is the tiny one: one layer, as wide as the vocabulary, four heads.
type Shape struct {
	Layers, Width, Heads, KVHeads, FFN int
	// Vocab pads the vocabulary to this many tokens (control tokens no text produces).
	Vocab int
	// ContextLength overrides the model's trained context length, when set.
	ContextLength int
}

// Shapes are named shapes: tiny, small (a CPU-sized model with a real model's structure:
// grouped-query attention, a gated feed-forward, a 32k vocabulary), and Llama 3's 1B
// and 8B (for a GPU: 2.5 GB and 16 GB files).
var Shapes = map[string]Shape{
	"tiny":        {},
	"small":       {Layers: 4, Width: 384, Heads: 6, KVHeads: 2, FFN: 1024, Vocab: 32000},
	"llama3.2-1b": {Layers: 16, Width: 2048, Heads: 32, KVHeads: 8, FFN: 8192, Vocab: 128256},
	"llama3-8b":   {Layers: 32, Width: 4096, Heads: 32, KVHeads: 8, FFN: 14336, Vocab: 128256},
}

// resolve fills a shape's zero fields for a vocabulary of v tokens: the tiny model.
func (s Shape) resolve(v int) (Shape, error) {
	if s.Layers == 0 {
		s.Layers = 1
	}
	if s.Width == 0 {
		s.Width = (v + 31) / 32 * 32 // one-hot embeddings need width >= vocabulary size
	}
	if s.Heads == 0 {
		s.Heads, s.KVHeads = 4, 1
	}
	if s.KVHeads == 0 {
		s.KVHeads = s.Heads
	}
	if s.FFN == 0 {
		s.FFN = 32
	}
	s.Vocab = max(s.Vocab, v)
	switch {
	case s.Width < v:
		return s, fmt.Errorf("bigram: width %d is below the %d tokens the answers use (one-hot embeddings)", s.Width, v)
	case s.Width%s.Heads != 0 || s.Heads%s.KVHeads != 0:
		return s, fmt.Errorf("bigram: width %d, %d heads and %d KV heads do not divide", s.Width, s.Heads, s.KVHeads)
	}
	return s, nil
}

// WriteGGUF writes the tiny model to path as F16 GGUF (F32 files report quantization
// "unknown" in /api/show).
func (m Model) WriteGGUF(path string) error { return m.WriteShapedGGUF(path, Shape{}) }

// WriteShapedGGUF writes the model in the given shape. Weights are generated as they
// are written, so an 8B file needs no 16 GB of memory.
func (m Model) WriteShapedGGUF(path string, shape Shape) error {
	tokens, types, next, err := m.Vocab()
	if err != nil {
		return err
	}
	used := len(tokens)
	sh, err := shape.resolve(used)
	if err != nil {
		return err
	}
	for i := used; i < sh.Vocab; i++ {
		tokens = append(tokens, fmt.Sprintf("<|pad_%d|>", i))
		types = append(types, typeControl)
	}
	kv := sh.metadata(m.contextLength(sh), tokens, types)
	ts := sh.tensors(next) // one entry per used token
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := ggml.WriteGGUF(f, kv, ts); err != nil {
		_ = f.Close() // the error above is the one returned
		return fmt.Errorf("bigram: write %s: %w", path, err)
	}
	return f.Close()
}

// contextLength is the trained context length the file declares: the shape's, else the
// model's, else 4096.
func (m Model) contextLength(sh Shape) int {
	switch {
	case sh.ContextLength > 0:
		return sh.ContextLength
	case m.ContextLength != 0:
		return m.ContextLength
	}
	return 4096
}

// metadata is the file's key-value header: a Llama architecture of shape sh, and a GPT-2
// tokenizer over tokens.
func (sh Shape) metadata(ctx int, tokens []string, types []int32) ggml.KV {
	return ggml.KV{
		"general.architecture":                   "llama",
		"general.name":                           "bigram",
		"general.file_type":                      uint32(1), // mostly F16
		"llama.block_count":                      uint32(sh.Layers),
		"llama.context_length":                   uint32(ctx),
		"llama.embedding_length":                 uint32(sh.Width),
		"llama.feed_forward_length":              uint32(sh.FFN),
		"llama.attention.head_count":             uint32(sh.Heads),
		"llama.attention.head_count_kv":          uint32(sh.KVHeads),
		"llama.attention.layer_norm_rms_epsilon": float32(1e-5),
		"llama.rope.dimension_count":             uint32(sh.Width / sh.Heads),
		"llama.rope.freq_base":                   float32(10000),
		"llama.vocab_size":                       uint32(sh.Vocab),
		"tokenizer.ggml.model":                   "gpt2",
		"tokenizer.ggml.pre":                     "default",
		"tokenizer.ggml.tokens":                  tokens,
		"tokenizer.ggml.token_type":              types,
		"tokenizer.ggml.merges":                  []string{"Ġ Ġ"},
		"tokenizer.ggml.bos_token_id":            uint32(bos),
		"tokenizer.ggml.eos_token_id":            uint32(eos),
		"tokenizer.ggml.add_bos_token":           false,
		"tokenizer.ggml.add_eos_token":           false,
	}
}

// tensors are the model's weights: the bigram table in the embeddings and the output,
// which next gives for each used token, and layers that compute but change nothing.
func (sh Shape) tensors(next []int) []*ggml.Tensor {
	width, v := sh.Width, sh.Vocab
	// Row t of the embeddings is token t's one-hot vector (the padding tokens' rows are
	// zero: no text produces them); row n of the output feeds n = next(i) from column i.
	embd := sparse{ne0: width, ne1: v, at: map[int]float32{}}
	out := sparse{ne0: width, ne1: v, at: map[int]float32{}}
	for t, n := range next {
		embd.at[t*width+t] = 1
		out.at[n*width+t] = gap
	}
	ts := []*ggml.Tensor{
		embd.tensor("token_embd.weight"),
		out.tensor("output.weight"),
		f32("output_norm.weight", ones(width), width),
	}
	for l := range sh.Layers {
		ts = append(ts, sh.layer(l)...)
	}
	return ts
}

// layer is block l's tensors.
func (sh Shape) layer(l int) []*ggml.Tensor {
	width, headDim := sh.Width, sh.Width/sh.Heads
	kvDim := sh.KVHeads * headDim
	blk := func(name string) string { return fmt.Sprintf("blk.%d.%s", l, name) }
	return []*ggml.Tensor{
		f32(blk("attn_norm.weight"), ones(width), width),
		f32(blk("ffn_norm.weight"), ones(width), width),
		// Small weights: the attention and the gated feed-forward compute for real...
		noise(blk("attn_q.weight"), width, sh.Heads*headDim, uint64(l)*8+1),
		noise(blk("attn_k.weight"), width, kvDim, uint64(l)*8+2),
		noise(blk("attn_v.weight"), width, kvDim, uint64(l)*8+3),
		noise(blk("ffn_gate.weight"), width, sh.FFN, uint64(l)*8+4),
		noise(blk("ffn_up.weight"), width, sh.FFN, uint64(l)*8+5),
		// ...and their output projections are zero: nothing reaches the residual stream.
		sparse{ne0: sh.Heads * headDim, ne1: width}.tensor(blk("attn_output.weight")),
		sparse{ne0: sh.FFN, ne1: width}.tensor(blk("ffn_down.weight")),
	}
}

// ones is n ones (the norms' weights: the identity).
func ones(n int) []float32 {
	s := make([]float32, n)
	for i := range s {
		s[i] = 1
	}
	return s
}

// sparse is an F16 tensor of shape [ne0, ne1] that is zero but at a few indexes,
// written without holding it in memory.
type sparse struct {
	ne0, ne1 int
	at       map[int]float32
}

func (s sparse) tensor(name string) *ggml.Tensor {
	return f16Stream(name, s.ne0, s.ne1, func(i int) float32 { return s.at[i] })
}

// noise is an F16 tensor of small deterministic pseudo-random values (|x| < 0.02).
func noise(name string, ne0, ne1 int, seed uint64) *ggml.Tensor {
	return f16Stream(name, ne0, ne1, func(i int) float32 {
		x := (uint64(i) + 1) * (seed*0x9E3779B97F4A7C15 | 1)
		x ^= x >> 29
		x *= 0xBF58476D1CE4E5B9
		x ^= x >> 32
		return (float32(x&0xffff)/0xffff - 0.5) * 0.04
	})
}

// f16Stream is a 2-D F16 tensor whose values come from value(i), written in chunks.
func f16Stream(name string, ne0, ne1 int, value func(i int) float32) *ggml.Tensor {
	return &ggml.Tensor{Name: name, Kind: uint32(ggml.TensorTypeF16), Shape: []uint64{uint64(ne0), uint64(ne1)},
		WriterTo: stream{n: ne0 * ne1, value: value}}
}

// stream writes n F16 values.
type stream struct {
	n     int
	value func(i int) float32
}

func (s stream) WriteTo(w io.Writer) (int64, error) {
	const chunk = 1 << 16
	buf := make([]byte, 2*chunk)
	var total int64
	for start := 0; start < s.n; start += chunk {
		end := min(start+chunk, s.n)
		b := buf[:2*(end-start)]
		for i := start; i < end; i++ {
			h := half(s.value(i))
			b[2*(i-start)], b[2*(i-start)+1] = byte(h), byte(h>>8)
		}
		n, err := w.Write(b)
		total += int64(n)
		if err != nil {
			return total, err
		}
	}
	return total, nil
}

// data is a tensor's bytes.
type data []byte

func (d data) WriteTo(w io.Writer) (int64, error) {
	n, err := w.Write(d)
	return int64(n), err
}

// f32 is a 1-D F32 tensor (norm weights stay F32, as converters write them).
func f32(name string, values []float32, n int) *ggml.Tensor {
	b := make([]byte, 4*n)
	for i, x := range values {
		u := math.Float32bits(x)
		b[4*i], b[4*i+1], b[4*i+2], b[4*i+3] = byte(u), byte(u>>8), byte(u>>16), byte(u>>24)
	}
	return &ggml.Tensor{Name: name, Kind: uint32(ggml.TensorTypeF32), Shape: []uint64{uint64(n)}, WriterTo: data(b)}
}

// half converts a float32 in F16's normal range (or zero) to IEEE half precision,
// rounding to nearest; values below F16's normal range (2^-14) become zero.
func half(x float32) uint16 {
	u := math.Float32bits(x)
	sign := uint16(u>>16) & 0x8000
	exp := int(u>>23&0xff) - 127 + 15
	mant := u & 0x7fffff
	if x == 0 || exp <= 0 {
		return sign
	}
	if exp >= 31 {
		return sign | 0x7c00
	}
	h := uint32(exp)<<10 | mant>>13
	if mant&0x1000 != 0 { // round half up; a carry into the exponent is still correct
		h++
	}
	return sign | uint16(h)
}

// byteRunes is gpt2's bytes_to_unicode: the printable bytes stand for themselves, the
// rest map to runes from U+0100 up, in byte order. Token firstByte+b is byte b.
func byteRunes() []rune {
	var printable []int
	for b := '!'; b <= '~'; b++ {
		printable = append(printable, int(b))
	}
	for b := 0xa1; b <= 0xac; b++ {
		printable = append(printable, b)
	}
	for b := 0xae; b <= 0xff; b++ {
		printable = append(printable, b)
	}
	runes := make([]rune, 256)
	n := 0
	for b := range 256 {
		if slices.Contains(printable, b) {
			runes[b] = rune(b)
		} else {
			runes[b] = rune(256 + n)
			n++
		}
	}
	return runes
}
