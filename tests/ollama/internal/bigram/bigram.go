// Package bigram writes a tiny, deterministic llama model as GGUF (through Ollama's own
// fs/ggml writer), for end-to-end tests against the real Ollama server.
//
// The model is a bigram table: one layer whose attention and feed-forward outputs are
// zero, so the residual stream carries the last token's one-hot embedding straight to
// the output matrix, which maps token i to next(i) with a logit gap of ~140. Whatever the
// temperature, the token after i is always next(i). The vocabulary is byte-level BPE
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

// WriteGGUF writes the model to path as F16 GGUF (F32 files report quantization
// "unknown" in /api/show).
func (m Model) WriteGGUF(path string) error {
	tokens, types, next, err := m.Vocab()
	if err != nil {
		return err
	}
	v := len(tokens)
	width := (v + 31) / 32 * 32 // one-hot embeddings need width >= vocabulary size
	const heads, headsKV, ffn = 4, 1, 32
	headDim := width / heads
	ctx := m.ContextLength
	if ctx == 0 {
		ctx = 4096
	}
	kv := ggml.KV{
		"general.architecture":                   "llama",
		"general.name":                           "bigram",
		"general.file_type":                      uint32(1), // mostly F16
		"llama.block_count":                      uint32(1),
		"llama.context_length":                   uint32(ctx),
		"llama.embedding_length":                 uint32(width),
		"llama.feed_forward_length":              uint32(ffn),
		"llama.attention.head_count":             uint32(heads),
		"llama.attention.head_count_kv":          uint32(headsKV),
		"llama.attention.layer_norm_rms_epsilon": float32(1e-5),
		"llama.rope.dimension_count":             uint32(headDim),
		"llama.rope.freq_base":                   float32(10000),
		"llama.vocab_size":                       uint32(v),
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

	embd := make([]float32, v*width) // row t: token t's one-hot vector
	out := make([]float32, v*width)  // row n: the logits' weights; column i feeds n=next(i)
	for t := range v {
		embd[t*width+t] = 1
		out[next[t]*width+t] = gap
	}
	ones := func(n int) []float32 {
		s := make([]float32, n)
		for i := range s {
			s[i] = 1
		}
		return s
	}
	ts := []*ggml.Tensor{
		f16("token_embd.weight", embd, width, v),
		f16("output.weight", out, width, v),
		f32("output_norm.weight", ones(width), width),
		f32("blk.0.attn_norm.weight", ones(width), width),
		f32("blk.0.ffn_norm.weight", ones(width), width),
		// Zero projections: attention and the feed-forward add nothing to the residual.
		f16("blk.0.attn_q.weight", nil, width, heads*headDim),
		f16("blk.0.attn_k.weight", nil, width, headsKV*headDim),
		f16("blk.0.attn_v.weight", nil, width, headsKV*headDim),
		f16("blk.0.attn_output.weight", nil, heads*headDim, width),
		f16("blk.0.ffn_gate.weight", nil, width, ffn),
		f16("blk.0.ffn_up.weight", nil, width, ffn),
		f16("blk.0.ffn_down.weight", nil, ffn, width),
	}
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

// data is a tensor's bytes.
type data []byte

func (d data) WriteTo(w io.Writer) (int64, error) {
	n, err := w.Write(d)
	return int64(n), err
}

// f16 is a 2-D F16 tensor of shape [ne0, ne1] (ne0 varies fastest); nil values are zeros.
func f16(name string, values []float32, ne0, ne1 int) *ggml.Tensor {
	b := make([]byte, 2*ne0*ne1)
	for i, x := range values {
		h := half(x)
		b[2*i], b[2*i+1] = byte(h), byte(h>>8)
	}
	return &ggml.Tensor{Name: name, Kind: uint32(ggml.TensorTypeF16), Shape: []uint64{uint64(ne0), uint64(ne1)}, WriterTo: data(b)}
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
// rounding to nearest; the model only holds 0, 1 and gap.
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
