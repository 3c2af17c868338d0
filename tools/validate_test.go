package tools_test

import (
	"errors"
	"fmt"
	"math"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"gotest.tools/v3/assert"

	"github.com/agentrunner/runner/tools"
	"github.com/agentrunner/runner/tools/catalog"
)

// referenceFields validates v with a general JSON Schema implementation and returns the
// sorted set of fields it names (the field itself, or the missing required name).
func referenceFields(t *testing.T, name string, schema *tools.Schema, v any) []string {
	t.Helper()
	c := jsonschema.NewCompiler()
	url := "tool:///" + name + ".json"
	assert.NilError(t, c.AddResource(url, schema.Map()))
	compiled, err := c.Compile(url)
	assert.NilError(t, err)
	verr := compiled.Validate(v)
	if verr == nil {
		return nil
	}
	var ve *jsonschema.ValidationError
	assert.Assert(t, errors.As(verr, &ve))
	seen := map[string]bool{}
	var walk func(*jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		if len(e.Causes) > 0 {
			for _, c := range e.Causes {
				walk(c)
			}
			return
		}
		field := strings.Join(e.InstanceLocation, ".")
		if req, ok := e.ErrorKind.(*kind.Required); ok {
			for _, m := range req.Missing {
				if field != "" {
					m = field + "." + m
				}
				seen[m] = true
			}
			return
		}
		if field == "" {
			field = "(arguments)"
		}
		seen[field] = true
	}
	walk(ve)
	return sortedKeys(seen)
}

// ownFields returns the fields our validator's problems name.
func ownFields(problems []string) []string {
	seen := map[string]bool{}
	for _, p := range problems {
		p = strings.TrimPrefix(p, "'")
		seen[p[:strings.Index(p, "'")]] = true
	}
	return sortedKeys(seen)
}

func sortedKeys(m map[string]bool) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// TestValidateAgreesWithJSONSchema runs every catalog tool's schema over valid arguments
// and over each parameter given a value of every JSON type, an out-of-range number and a
// missing required name, and requires the same verdict and the same named fields as
// santhosh-tekuri/jsonschema, the validator runner used before (kept here as the oracle:
// it is not linked into the binary, whose start-up its init made 5-17 ms slower).
func TestValidateAgreesWithJSONSchema(t *testing.T) {
	samples := []any{"s", "", float64(3), float64(0), float64(-1), 2.5, float64(1e9), true, false, nil,
		[]any{}, []any{"a", float64(1)}, []any{"a"}, map[string]any{}, map[string]any{"k": "v"}, map[string]any{"k": float64(1)}}
	cases := 0
	for _, spec := range catalog.Default().Specs() {
		schema := spec.Parameters
		assert.NilError(t, schema.Check(), spec.Name)
		base := map[string]any{}
		for _, r := range schema.Required {
			base[r] = validSample(schema.Properties[r])
		}
		check := func(label string, args map[string]any) {
			cases++
			want := referenceFields(t, spec.Name, schema, args)
			got := ownFields(schema.Validate(args))
			assert.DeepEqual(t, got, want)
			if t.Failed() {
				t.Fatalf("%s %s: args %v: ours %v, reference %v", spec.Name, label, args, schema.Validate(args), want)
			}
		}
		check("required only", base)
		for name := range schema.Properties {
			for _, v := range samples {
				args := clone(base)
				args[name] = v
				check(fmt.Sprintf("%s=%#v", name, v), args)
			}
		}
		for _, r := range schema.Required {
			args := clone(base)
			delete(args, r)
			check("without "+r, args)
		}
	}
	assert.Assert(t, cases > 500, "only %d cases", cases)
}

func validSample(s *tools.Schema) any {
	if len(s.Enum) > 0 {
		return s.Enum[0]
	}
	switch s.Type {
	case "integer", "number":
		if s.Minimum != nil {
			return *s.Minimum
		}
		return float64(1)
	case "boolean":
		return true
	case "array":
		return []any{}
	case "object":
		return map[string]any{}
	}
	return "x"
}

func clone(m map[string]any) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

func TestSchemaCheck(t *testing.T) {
	one, five := 1.0, 5.0
	for _, tc := range []struct {
		schema *tools.Schema
		want   string
	}{
		{&tools.Schema{Type: "strng"}, `(root): unknown type "strng"`},
		{tools.Object(map[string]*tools.Schema{"a": tools.String("")}, "b"), `required "b" is not a property`},
		{&tools.Schema{Type: "integer", Enum: []any{"x"}}, "enum value x"},
		{&tools.Schema{Type: "integer", Minimum: &five, Default: 1}, "default 1"},
		{tools.Object(map[string]*tools.Schema{"l": tools.Array("", &tools.Schema{Type: "nope"})}), `l[]: unknown type "nope"`},
		{tools.Object(map[string]*tools.Schema{"m": {Type: "object", AdditionalProperties: &tools.Schema{Type: "x"}}}), `m.*: unknown type "x"`},
	} {
		assert.ErrorContains(t, tc.schema.Check(), tc.want)
	}
	ok := &tools.Schema{Type: "integer", Minimum: &one, Maximum: &five, Default: 3, Enum: []any{1, 3, 5}}
	assert.NilError(t, ok.Check())
	assert.DeepEqual(t, ok.Validate(float64(3)), []string(nil))
	assert.DeepEqual(t, ok.Validate(float64(4)), []string{"'(arguments)': value must be one of [1,3,5]"})
	assert.DeepEqual(t, ok.Validate(2.5), []string{"'(arguments)': want integer, got number"})
	min := 2
	str := &tools.Schema{Type: "string", MinLength: &min}
	assert.DeepEqual(t, str.Validate("é"), []string{"'(arguments)': length must be >= 2, but got 1"})
	assert.DeepEqual(t, ok.Validate(float64(9)), []string{"'(arguments)': value must be one of [1,3,5]"})
	rng := &tools.Schema{Type: "number", Minimum: &one, Maximum: &five}
	assert.DeepEqual(t, rng.Validate(float64(9)), []string{"'(arguments)': must be <= 5 but got 9"})
	assert.DeepEqual(t, rng.Validate(float64(0)), []string{"'(arguments)': must be >= 1 but got 0"})
}

// TestRawSchemaErrors: a schema from a task file or an MCP server that is not usable is
// refused with what is wrong, before any call, and a call against it is refused too.
func TestRawSchemaErrors(t *testing.T) {
	// YAML's .nan reaches a task file's schema as a NaN, which JSON cannot hold.
	_, err := tools.RawSchema(map[string]any{"type": "object", "properties": map[string]any{
		"n": map[string]any{"type": "number", "minimum": math.NaN()}}})
	assert.ErrorContains(t, err, "schema: json: unsupported value: NaN")

	typo, err := tools.RawSchema(map[string]any{"type": "object", "properties": map[string]any{
		"n": map[string]any{"type": "integr"}}})
	assert.NilError(t, err)
	assert.ErrorContains(t, typo.Check(), `n: unknown type "integr"`)

	// A keyword of the wrong shape: the fields skip it, the full implementation cannot
	// read the schema at all.
	bad, err := tools.RawSchema(map[string]any{"type": "object", "properties": map[string]any{
		"s": map[string]any{"type": "string", "maxLength": "ten"}}})
	assert.NilError(t, err)
	assert.ErrorContains(t, bad.Check(), "not a JSON Schema: ")
	assert.DeepEqual(t, bad.Validate(map[string]any{"s": "x"}),
		[]string{"'(arguments)': the schema does not resolve: " + bad.Check().Error()})

	// Without items, an array holds anything; pattern is the full implementation's.
	list, err := tools.RawSchema(map[string]any{"type": "object", "properties": map[string]any{
		"l": map[string]any{"type": "array"}, "p": map[string]any{"type": "string", "pattern": "^a"}}})
	assert.NilError(t, err)
	assert.NilError(t, list.Check())
	assert.Equal(t, len(list.Validate(map[string]any{"l": []any{1.0, "x", nil}})), 0)
	// The fields' problems come first, each named; the full implementation's after.
	got := list.Validate(map[string]any{"l": "x", "p": "b"})
	assert.DeepEqual(t, got, []string{"'l': want array, got string"})
	got = list.Validate(map[string]any{"p": "b"})
	assert.Equal(t, len(got), 1)
	assert.Check(t, strings.Contains(got[0], "'(arguments)': ") && strings.Contains(got[0], "^a"), got[0])
}

// ValidName accepts exactly what the providers' pattern ^[a-zA-Z0-9_-]{1,64}$ accepts.
func TestValidName(t *testing.T) {
	pattern := regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)
	names := []string{"", "a", "read_file", "srv__tool", "Tool-9", "a b", "a.b", "a/b", "é", "x\x00",
		strings.Repeat("a", 64), strings.Repeat("a", 65), "ok\n", "-", "_"}
	for _, n := range names {
		assert.Equal(t, tools.ValidName(n), pattern.MatchString(n), "%q", n)
	}
}
