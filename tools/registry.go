package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"runtime/debug"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Alias exposes a tool under another spec's name and parameter names.
type Alias struct {
	// Name is the alias the model may call.
	Name string
	// Target is the canonical tool name.
	Target string
	// Params renames the alias's parameters to the target's (alias name -> canonical name).
	Params map[string]string
	// Rewrite, when set, adjusts the renamed arguments further (e.g. DraCode's "arguments"
	// string appended to "command").
	Rewrite func(Args)
}

// Registry holds tools and aliases. It is safe for concurrent use; the runner adds tools
// declared in task files and Go users can register their own.
type Registry struct {
	mu      sync.RWMutex
	order   []string
	tools   map[string]*entry
	aliases map[string]Alias
	// synonyms are other specs' parameter names for a tool's own, by canonical tool
	// (write_file: createDirs -> create_directories), used whatever name the tool is
	// called by.
	synonyms map[string]map[string]string
}

type entry struct {
	tool Tool
	spec Spec

	// The schema is checked and its defaults collected on the tool's first Prepare, not
	// at Register: a process (one `runner run`, one `runner tool`) calls few of the
	// catalog's tools. Subsets share the entry, so each schema is checked once per process.
	once      sync.Once
	schemaErr error
	// defaults are the schema's defaults in their JSON form (numbers as float64), as the
	// model's own arguments would arrive.
	defaults map[string]any
}

// compiled checks the entry's schema and collects its defaults on first use.
func (e *entry) compiled() (map[string]any, error) {
	e.once.Do(func() {
		// Check first: Map panics on a schema that does not marshal (a default that is not
		// JSON), and a malformed schema must fail the tool's calls, not crash the run.
		if e.schemaErr = e.spec.Parameters.Check(); e.schemaErr != nil {
			return
		}
		schemaMap := e.spec.Parameters.Map()
		defaults := map[string]any{}
		props, _ := schemaMap["properties"].(map[string]any)
		for name, p := range props {
			if d, ok := p.(map[string]any)["default"]; ok {
				defaults[name] = d
			}
		}
		e.defaults = defaults
	})
	return e.defaults, e.schemaErr
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry {
	return &Registry{tools: map[string]*entry{}, aliases: map[string]Alias{}, synonyms: map[string]map[string]string{}}
}

// AddSynonyms lets a tool take other names for its parameters (other name -> canonical
// name), under its own name and its aliases. Each canonical name must be a parameter.
func (r *Registry) AddSynonyms(tool string, params map[string]string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	e, ok := r.tools[tool]
	if !ok {
		return fmt.Errorf("synonyms: unknown tool %s", tool)
	}
	if r.synonyms[tool] == nil {
		r.synonyms[tool] = map[string]string{}
	}
	for from, to := range params {
		if e.spec.Parameters.Properties[to] == nil {
			return fmt.Errorf("synonyms of %s: %s -> %s: no parameter %s", tool, from, to, to)
		}
		r.synonyms[tool][from] = to
	}
	return nil
}

// Register adds a tool. Its name must be new and its parameter schema an object. The
// schema is compiled on the tool's first call (see CheckSchemas to compile them all now):
// one that does not compile fails every call of the tool.
func (r *Registry) Register(t Tool) error {
	spec := t.Spec()
	if spec.Name == "" {
		return fmt.Errorf("register tool: empty name")
	}
	if spec.Parameters == nil || spec.Parameters.Type != "object" {
		return fmt.Errorf("register tool %s: parameter schema must have type object", spec.Name)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, dup := r.tools[spec.Name]; dup {
		return fmt.Errorf("register tool %s: a tool with that name exists", spec.Name)
	}
	if _, dup := r.aliases[spec.Name]; dup {
		return fmt.Errorf("register tool %s: an alias with that name exists", spec.Name)
	}
	r.tools[spec.Name] = &entry{tool: t, spec: spec}
	r.order = append(r.order, spec.Name)
	return nil
}

// CheckSchemas compiles every tool's parameter schema now and returns the first that does
// not compile, for tests and for Go users who want Register's errors up front.
func (r *Registry) CheckSchemas() error {
	r.mu.RLock()
	entries := make([]*entry, 0, len(r.order))
	for _, n := range r.order {
		entries = append(entries, r.tools[n])
	}
	r.mu.RUnlock()
	for _, e := range entries {
		if _, err := e.compiled(); err != nil {
			return fmt.Errorf("tool %s: %w", e.spec.Name, err)
		}
	}
	return nil
}

// MustRegister is Register that panics, for catalogs built at start-up.
func (r *Registry) MustRegister(tools ...Tool) {
	for _, t := range tools {
		if err := r.Register(t); err != nil {
			panic(err)
		}
	}
}

// AddAlias adds an alias for a registered tool.
func (r *Registry) AddAlias(a Alias) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.tools[a.Target]; !ok {
		return fmt.Errorf("alias %s: unknown target tool %s", a.Name, a.Target)
	}
	if _, dup := r.tools[a.Name]; dup {
		return fmt.Errorf("alias %s: a tool with that name exists", a.Name)
	}
	if _, dup := r.aliases[a.Name]; dup {
		return fmt.Errorf("alias %s: already defined", a.Name)
	}
	r.aliases[a.Name] = a
	return nil
}

// Lookup finds a tool by canonical name or alias and returns its canonical name.
func (r *Registry) Lookup(name string) (Tool, string, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	if e, ok := r.tools[name]; ok {
		return e.tool, name, true
	}
	if a, ok := r.aliases[name]; ok {
		return r.tools[a.Target].tool, a.Target, true
	}
	return nil, "", false
}

// Canonical returns the canonical tool name for a name or alias.
func (r *Registry) Canonical(name string) (string, bool) {
	_, canonical, ok := r.Lookup(name)
	return canonical, ok
}

// Names lists canonical tool names in registration order.
func (r *Registry) Names() []string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return append([]string(nil), r.order...)
}

// Specs lists the tools' specs in registration order.
func (r *Registry) Specs() []Spec {
	r.mu.RLock()
	defer r.mu.RUnlock()
	specs := make([]Spec, 0, len(r.order))
	for _, n := range r.order {
		specs = append(specs, r.tools[n].spec)
	}
	return specs
}

// Aliases lists the aliases sorted by name.
func (r *Registry) Aliases() []Alias {
	r.mu.RLock()
	defer r.mu.RUnlock()
	out := make([]Alias, 0, len(r.aliases))
	for _, a := range r.aliases {
		out = append(out, a)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Subset returns a registry with only the named tools (names or aliases), in this
// registry's order, plus the aliases that point at them.
func (r *Registry) Subset(names ...string) (*Registry, error) {
	want := map[string]bool{}
	for _, n := range names {
		canonical, ok := r.Canonical(n)
		if !ok {
			return nil, fmt.Errorf("unknown tool %q (known: %s)", n, strings.Join(r.Names(), ", "))
		}
		want[canonical] = true
	}
	r.mu.RLock()
	defer r.mu.RUnlock()
	sub := NewRegistry()
	for _, n := range r.order {
		if want[n] {
			sub.tools[n] = r.tools[n]
			sub.order = append(sub.order, n)
		}
	}
	for name, a := range r.aliases {
		if want[a.Target] {
			sub.aliases[name] = a
		}
	}
	for name, syn := range r.synonyms {
		if want[name] {
			sub.synonyms[name] = syn
		}
	}
	return sub, nil
}

// With returns a registry holding this one's tools, aliases and synonyms plus extra, which must
// not clash with any of them. The entries are shared, not copied: it is meant to be
// called once per scenario to add the tools a task brings, not per step.
func (r *Registry) With(extra ...Tool) (*Registry, error) {
	r.mu.RLock()
	out := &Registry{
		order:    append(make([]string, 0, len(r.order)+len(extra)), r.order...),
		tools:    make(map[string]*entry, len(r.tools)+len(extra)),
		aliases:  make(map[string]Alias, len(r.aliases)),
		synonyms: make(map[string]map[string]string, len(r.synonyms)),
	}
	for n, e := range r.tools {
		out.tools[n] = e
	}
	for n, a := range r.aliases {
		out.aliases[n] = a
	}
	for n, syn := range r.synonyms {
		out.synonyms[n] = syn
	}
	r.mu.RUnlock()
	for _, t := range extra {
		if err := out.Register(t); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// Call is a tool call whose arguments have been decoded, renamed, defaulted and checked
// against the schema, ready for the policy and for Execute.
type Call struct {
	// Name is the name the model used (possibly an alias).
	Name string
	// Tool is the canonical tool name.
	Tool string
	// Args are the normalized arguments.
	Args Args

	tool Tool
}

// Risk returns the called tool's static risk level.
func (c *Call) Risk() Risk { return c.tool.Spec().Risk }

// RequiresApproval reports whether this call is destructive (see Tool.RequiresApproval).
func (c *Call) RequiresApproval(ws *Workspace) bool { return c.tool.RequiresApproval(c.Args, ws) }

// Prepare decodes raw arguments for the named tool: a JSON object, a JSON string holding
// one, or empty. Alias parameter names are mapped, then other specs' names for the
// tool's parameters (synonyms, and camelCase spellings such as includeHidden for
// include_hidden); a parameter that is still unknown is an INVALID_ARGUMENT error
// naming the accepted ones, never silently dropped: a model that believes it set an
// option must learn it did not. Defaults are applied and the result is checked
// against the tool's schema.
func (r *Registry) Prepare(name string, raw json.RawMessage) (*Call, *Error) {
	return r.prepare(name, raw)
}

// CheckArgs is Prepare for arguments written by a person (a task's reference solution),
// reporting an error as a Go error.
func (r *Registry) CheckArgs(name string, args map[string]any) error {
	raw, err := json.Marshal(args)
	if err != nil {
		return fmt.Errorf("arguments for %s: %w", name, err)
	}
	if _, terr := r.prepare(name, raw); terr != nil {
		return terr
	}
	return nil
}

func (r *Registry) prepare(name string, raw json.RawMessage) (*Call, *Error) {
	r.mu.RLock()
	e, canonical, alias := r.find(name)
	synonyms := r.synonyms[canonical]
	r.mu.RUnlock()
	if e == nil {
		return nil, Errorf(CodeInvalidArgument, "Available tools: "+strings.Join(r.Names(), ", ")+".", "Unknown tool '%s'", name)
	}
	defaults, serr := e.compiled()
	if serr != nil {
		return nil, Errorf(CodeExecutionError, "Use another tool.", "Tool %s cannot take calls: its parameter schema is malformed: %v", canonical, serr)
	}
	args, err := DecodeArgs(raw)
	if err != nil {
		return nil, err
	}
	if alias != nil {
		args = alias.rename(args)
	}
	props := e.spec.Parameters.Properties
	// file_path is the Python and TypeScript specs' name for path, in every file tool.
	if v, ok := args["file_path"]; ok && props["file_path"] == nil && props["path"] != nil {
		if p, set := args["path"]; set && p != v {
			return nil, Errorf(CodeInvalidArgument, "Give the path once, as path.",
				"%s got both path %v and file_path %v", canonical, p, v)
		}
		args["path"] = v
		delete(args, "file_path")
	}
	if unknown := resolveParams(args, props, synonyms); len(unknown) > 0 {
		return nil, unknownParams(canonical, name, unknown, props)
	}
	for k, d := range defaults {
		if _, set := args[k]; !set {
			args[k] = d
		}
	}
	if problems := e.spec.Parameters.Validate(map[string]any(args)); len(problems) > 0 {
		return nil, Errorf(CodeInvalidArgument, "Check the parameter types and required fields in the tool's schema.",
			"Invalid arguments for %s: %s", canonical, strings.Join(problems, "; "))
	}
	return &Call{Name: name, Tool: canonical, Args: args, tool: e.tool}, nil
}

// rename applies the alias's parameter names all at once (search_code maps
// query->pattern and pattern->file_pattern) and its rewrite. The alias's own names win
// over canonical names sent alongside them.
func (alias *Alias) rename(args Args) Args {
	renamed := make(Args, len(args))
	for k, v := range args {
		if _, ok := alias.Params[k]; !ok {
			renamed[k] = v
		}
	}
	for k, v := range args {
		if to, ok := alias.Params[k]; ok {
			renamed[to] = v
		}
	}
	if alias.Rewrite != nil {
		alias.Rewrite(renamed)
	}
	return renamed
}

// resolveParams renames synonyms and camelCase names to the tool's parameters, drops nulls
// ("not given") and coerces values to their schema's type, in place. It returns the
// names the tool does not take.
func resolveParams(args Args, props map[string]*Schema, synonyms map[string]string) []string {
	var unknown []string
	for k, v := range args {
		p, known := props[k]
		if !known {
			to := synonyms[k]
			if to == "" {
				to = snakeCase(k)
			}
			if _, set := args[to]; props[to] != nil && !set {
				p, known = props[to], true
				delete(args, k)
				k = to
			}
		}
		if !known {
			unknown = append(unknown, k)
			continue
		}
		if v == nil {
			delete(args, k) // null means "not given"
			continue
		}
		args[k] = coerce(p, v)
	}
	return unknown
}

// unknownParams names the parameters a tool does not take and the ones it does.
func unknownParams(canonical, name string, unknown []string, props map[string]*Schema) *Error {
	sort.Strings(unknown)
	known := make([]string, 0, len(props))
	for k := range props {
		known = append(known, k)
	}
	sort.Strings(known)
	called := canonical
	if name != canonical {
		called = name + " (" + canonical + ")"
	}
	noun := "parameter"
	if len(unknown) > 1 {
		noun = "parameters"
	}
	return Errorf(CodeInvalidArgument, "Call it again with only the listed parameters; nothing was done.",
		"%s has no %s %s (parameters: %s)", called, noun, strings.Join(unknown, ", "), strings.Join(known, ", "))
}

// snakeCase spells a camelCase parameter name the catalog's way: includeHidden is
// include_hidden, maxResults max_results. Other names come back unchanged.
func snakeCase(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 'A' && c <= 'Z' {
			if i > 0 {
				b.WriteByte('_')
			}
			c += 'a' - 'A'
		}
		b.WriteByte(c)
	}
	return b.String()
}

func (r *Registry) find(name string) (*entry, string, *Alias) {
	if e, ok := r.tools[name]; ok {
		return e, name, nil
	}
	if a, ok := r.aliases[name]; ok {
		return r.tools[a.Target], a.Target, &a
	}
	return nil, "", nil
}

// Execute validates and runs a prepared call, timing it. A panicking tool becomes an
// EXECUTION_ERROR result rather than a crashed run.
func (r *Registry) Execute(ctx context.Context, call *Call, ws *Workspace) (res Result) {
	start := time.Now()
	defer func() {
		if p := recover(); p != nil {
			res = Failf(CodeExecutionError, "", "tool %s crashed: %v\n%s", call.Tool, p, debug.Stack())
		}
		res.ExecutionTimeMS = time.Since(start).Milliseconds()
	}()
	if err := call.tool.Validate(call.Args, ws); err != nil {
		return Fail(err)
	}
	return call.tool.Execute(ctx, call.Args, ws)
}

// Run prepares and executes one call.
func (r *Registry) Run(ctx context.Context, name string, raw json.RawMessage, ws *Workspace) Result {
	call, err := r.Prepare(name, raw)
	if err != nil {
		return Fail(err)
	}
	return r.Execute(ctx, call, ws)
}

// DecodeArgs decodes a call's arguments: an object, a JSON string that holds an object
// (some models double-encode), or nothing at all.
func DecodeArgs(raw json.RawMessage) (Args, *Error) {
	trimmed := strings.TrimSpace(string(raw))
	if trimmed == "" || trimmed == "null" {
		return Args{}, nil
	}
	if strings.HasPrefix(trimmed, `"`) {
		var inner string
		if err := json.Unmarshal([]byte(trimmed), &inner); err != nil {
			return nil, Errorf(CodeInvalidArgument, "Send the arguments as a JSON object.", "Arguments are not valid JSON: %v", err)
		}
		trimmed = strings.TrimSpace(inner)
		if trimmed == "" {
			return Args{}, nil
		}
	}
	var args Args
	if err := json.Unmarshal([]byte(trimmed), &args); err != nil {
		return nil, Errorf(CodeInvalidArgument, "Send the arguments as a JSON object, e.g. {\"path\": \"main.go\"}.", "Arguments are not a valid JSON object: %v", err)
	}
	if args == nil {
		args = Args{}
	}
	return args, nil
}

// coerce turns a string that spells a number or boolean into that type where the schema
// wants one: small models often quote numbers. Anything else is left for the validator.
func coerce(p *Schema, v any) any {
	s, ok := v.(string)
	if !ok {
		return v
	}
	switch p.Type {
	case "integer", "number":
		// ParseFloat also reads "NaN" and "Inf", which JSON has no number for: NaN would
		// pass every minimum and maximum, so they stay strings for the validator to refuse.
		if f, err := strconv.ParseFloat(strings.TrimSpace(s), 64); err == nil && !math.IsNaN(f) && !math.IsInf(f, 0) {
			return f
		}
	case "boolean":
		if b, err := strconv.ParseBool(strings.TrimSpace(s)); err == nil {
			return b
		}
	}
	return v
}

func joinField(parent, name string) string {
	if parent == "" {
		return name
	}
	return parent + "." + name
}
