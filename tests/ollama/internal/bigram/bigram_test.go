package bigram

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"text/template"

	"github.com/ollama/ollama/api"
	"github.com/ollama/ollama/fs/ggml"
	"github.com/ollama/ollama/tools"
	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
)

// TestFileFollowsChains reads the written GGUF back, tiny and in the small shape, and
// runs what the model computes for a last token t (its one-hot embedding, RMS-normed,
// times the output matrix): the argmax must be next(t), by a margin no sampling can
// overcome. The blocks' output projections must be zero, so nothing else reaches the
// output, and their other weights not, so the compute is a real model's.
func TestFileFollowsChains(t *testing.T) {
	for _, name := range []string{"tiny", "small"} {
		t.Run(name, func(t *testing.T) { followsChains(t, Shapes[name]) })
	}
}

func followsChains(t *testing.T, shape Shape) {
	path := filepath.Join(t.TempDir(), GGUFName)
	assert.NilError(t, Default.WriteShapedGGUF(path, shape))
	f, err := os.Open(path)
	assert.NilError(t, err)
	defer func() { _ = f.Close() }() // test cleanup: its error does not change what the test checked
	g, err := ggml.Decode(f, -1)
	assert.NilError(t, err)
	kv := g.KV()
	assert.Equal(t, kv.Architecture(), "llama")
	assert.Equal(t, kv.String("tokenizer.ggml.model"), "gpt2")
	tokens, _, next, err := Default.Vocab()
	assert.NilError(t, err)
	all := kv.Strings("tokenizer.ggml.tokens")
	assert.DeepEqual(t, all[:len(tokens)], tokens)
	assert.Equal(t, len(all), max(shape.Vocab, len(tokens)))
	width := int(kv.EmbeddingLength())
	assert.Assert(t, width >= len(tokens))
	if shape.Layers > 0 {
		assert.Equal(t, int(kv.BlockCount()), shape.Layers)
		assert.Equal(t, width, shape.Width)
	}

	read := func(name string) []float32 {
		for _, tn := range g.Tensors().Items() {
			if tn.Name != name {
				continue
			}
			assert.Equal(t, tn.Kind, uint32(ggml.TensorTypeF16))
			b := make([]byte, tn.Size())
			_, err := f.ReadAt(b, int64(g.Tensors().Offset+tn.Offset))
			assert.NilError(t, err)
			out := make([]float32, len(b)/2)
			for i := range out {
				out[i] = fromHalf(binary.LittleEndian.Uint16(b[2*i:]))
			}
			return out
		}
		t.Fatalf("no tensor %s", name)
		return nil
	}
	nonZero := func(xs []float32) int {
		n := 0
		for _, x := range xs {
			if x != 0 {
				n++
			}
		}
		return n
	}
	last := fmt.Sprintf("blk.%d.", max(shape.Layers, 1)-1)
	assert.Equal(t, nonZero(read(last+"attn_output.weight")), 0)
	assert.Equal(t, nonZero(read(last+"ffn_down.weight")), 0)
	q := read(last + "attn_q.weight")
	assert.Assert(t, nonZero(q) > len(q)/2, "the attention computes on real weights")

	embd, out := read("token_embd.weight"), read("output.weight")
	assert.Equal(t, nonZero(embd[len(tokens)*width:])+nonZero(out[len(tokens)*width:]), 0, "padding tokens are never produced")
	for tok := range tokens {
		h := embd[tok*width : (tok+1)*width]
		var ss float64
		for _, x := range h {
			ss += float64(x) * float64(x)
		}
		scale := 1 / math.Sqrt(ss/float64(width)+1e-5)
		best, second, arg := math.Inf(-1), math.Inf(-1), -1
		for n := range tokens {
			var logit float64
			for i, x := range h {
				logit += float64(out[n*width+i]) * float64(x) * scale
			}
			if logit > best {
				best, second, arg = logit, best, n
			} else if logit > second {
				second = logit
			}
		}
		assert.Equal(t, arg, next[tok], "token %d %q", tok, tokens[tok])
		assert.Assert(t, best-second > 100, "token %q: logit gap %.1f", tokens[tok], best-second)
	}
	// The chain after MarkerUser spells the write_file call.
	var chain strings.Builder
	for tok := next[index(tokens, MarkerUser)]; tok != eos; tok = next[tok] {
		chain.WriteString(tokens[tok])
	}
	assert.Assert(t, is.Contains(chain.String(), `"name": "write_file"`))
}

// A shape narrower than the answers' tokens cannot hold their one-hot embeddings.
func TestShapeTooNarrowIsRefused(t *testing.T) {
	err := Default.WriteShapedGGUF(filepath.Join(t.TempDir(), GGUFName), Shape{Layers: 2, Width: 64, Heads: 4, FFN: 64})
	assert.ErrorContains(t, err, "width 64 is below")
}

func TestDuplicatePieceIsRefused(t *testing.T) {
	m := Model{Chains: []Chain{{"<a>", []string{"x1"}}, {"<b>", []string{"x1"}}}}
	_, _, _, err := m.Vocab()
	assert.ErrorContains(t, err, `token "x1" appears twice`)
}

// values is what Ollama's template.Execute gives a template using .Messages.
type values struct {
	Messages []api.Message
	Tools    api.Tools
}

var offered = api.Tools{tool("write_file"), tool("task_complete"), tool("run_in_terminal")}

func tool(name string) api.Tool {
	var t api.Tool
	t.Type = "function"
	t.Function.Name = name
	return t
}

func render(t *testing.T, v Variant, vals values) string {
	t.Helper()
	tmpl, err := template.New("").Option("missingkey=zero").Parse(v.Template)
	assert.NilError(t, err)
	var b bytes.Buffer
	assert.NilError(t, tmpl.Execute(&b, vals))
	return b.String()
}

// TestTemplatesEndWithTheStateMarker: the prompt's last token picks the answer.
func TestTemplatesEndWithTheStateMarker(t *testing.T) {
	user := []api.Message{{Role: "system", Content: "be brief"}, {Role: "user", Content: "write hello.txt"}}
	result := append(append([]api.Message{}, user...),
		api.Message{Role: "assistant", ToolCalls: []api.ToolCall{{Function: api.ToolCallFunction{Name: "write_file", Arguments: api.NewToolCallFunctionArguments()}}}},
		api.Message{Role: "tool", Content: "ok"})
	for _, tc := range []struct {
		variant      string
		vals         values
		wantSuffix   string
		wantContains string
	}{
		{"bigram", values{user, offered}, MarkerUser, ""},
		{"bigram", values{result, offered}, MarkerResult, `<tool_call>{"name": "write_file"`},
		{"bigram", values{user, nil}, MarkerNone, ""},
		{"bigram-text", values{result, offered}, MarkerResult, ""},
		{"bigram-notools", values{user, offered}, MarkerNone, ""},
		{"bigram-badtool", values{user, offered}, MarkerBad, ""},
		{"bigram-sleep", values{user, offered}, MarkerSleep, ""},
	} {
		got := render(t, variant(tc.variant), tc.vals)
		assert.Assert(t, strings.HasSuffix(got, tc.wantSuffix), "%s: %q", tc.variant, got)
		assert.Assert(t, is.Contains(got, tc.wantContains), tc.variant)
	}
}

// TestOllamaParsesTheAnswers feeds each answer, token by token, to Ollama's own tool-call
// parser as the server does: native calls come out as calls, the text variant's stay
// text, and a call to a tool not offered vanishes (what issue 17 saw the server do).
func TestOllamaParsesTheAnswers(t *testing.T) {
	parse := func(v Variant, marker string) ([]api.ToolCall, string) {
		tmpl, err := template.New("").Parse(v.Template)
		assert.NilError(t, err)
		p := tools.NewParser(tmpl, offered)
		var calls []api.ToolCall
		var content strings.Builder
		for _, piece := range chain(marker) {
			c, s := p.Add(piece)
			calls = append(calls, c...)
			content.WriteString(s)
		}
		return calls, content.String()
	}
	calls, content := parse(variant("bigram"), MarkerUser)
	assert.Equal(t, len(calls), 1)
	assert.Equal(t, calls[0].Function.Name, "write_file")
	path, _ := calls[0].Function.Arguments.Get("path")
	assert.Equal(t, path, File)
	assert.Equal(t, strings.TrimSpace(content), "")

	calls, _ = parse(variant("bigram"), MarkerResult)
	assert.Equal(t, len(calls), 1)
	assert.Equal(t, calls[0].Function.Name, "task_complete")

	calls, content = parse(variant("bigram-text"), MarkerUser)
	assert.Equal(t, len(calls), 0)
	assert.Assert(t, is.Contains(content, `<tool_call>`))

	calls, content = parse(variant("bigram-badtool"), MarkerBad)
	assert.Equal(t, len(calls), 0)
	assert.Equal(t, strings.TrimSpace(content), "")
}

func TestWriteMakesModelfiles(t *testing.T) {
	dir := t.TempDir()
	assert.NilError(t, Write(dir, Variants))
	for _, v := range Variants {
		b, err := os.ReadFile(filepath.Join(dir, v.Name+".Modelfile"))
		assert.NilError(t, err)
		assert.Assert(t, is.Contains(string(b), "FROM "+filepath.Join(dir, GGUFFile(v.Shape))))
	}
	b, err := os.ReadFile(filepath.Join(dir, "bigram-cpu.Modelfile"))
	assert.NilError(t, err)
	assert.Assert(t, is.Contains(string(b), "\nPARAMETER num_gpu 0\n"))
	st, err := os.Stat(filepath.Join(dir, GGUFName))
	assert.NilError(t, err)
	assert.Assert(t, st.Size() < 2<<20, "GGUF of %d bytes", st.Size())
	st, err = os.Stat(filepath.Join(dir, GGUFFile("small")))
	assert.NilError(t, err)
	assert.Assert(t, st.Size() > 50<<20, "the small shape's GGUF: %d bytes", st.Size())
	assert.ErrorContains(t, Write(dir, []Variant{Shaped("huge")}), `no shape "huge"`)
}

func chain(marker string) []string {
	for _, c := range Default.Chains {
		if c.Marker == marker {
			return c.Pieces
		}
	}
	return nil
}

func variant(name string) Variant {
	for _, v := range Variants {
		if v.Name == name {
			return v
		}
	}
	panic("no variant " + name)
}

func index(tokens []string, s string) int {
	for i, t := range tokens {
		if t == s {
			return i
		}
	}
	return -1
}

// fromHalf decodes an IEEE half (normal numbers and zero: all the model holds).
func fromHalf(h uint16) float32 {
	sign := uint32(h&0x8000) << 16
	exp := uint32(h>>10) & 0x1f
	mant := uint32(h & 0x3ff)
	if exp == 0 && mant == 0 {
		return math.Float32frombits(sign)
	}
	return math.Float32frombits(sign | (exp-15+127)<<23 | mant<<13)
}
