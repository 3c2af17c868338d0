package replay

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"

	"github.com/agentrunner/runner/runner/bounded"
	"github.com/agentrunner/runner/runner/model"
	"github.com/agentrunner/runner/runner/scrub"
)

// IndexFile is the name of a cassette's index.
const IndexFile = "index.json"

// Entry is one recording in the index.
type Entry struct {
	// Model is the PROVIDER:MODEL the response came from.
	Model string `json:"model"`
	// Hash is the normalised request's Hash.
	Hash string `json:"hash"`
	// Occurrence counts recordings of the same request by the same model in the same
	// scenario from 0: a scenario run with --repeat asks its first question several times.
	Occurrence int    `json:"occurrence,omitempty"`
	Scenario   string `json:"scenario,omitempty"`
	Step       int    `json:"step"`
	// File is the response file, relative to the cassette.
	File string `json:"file"`
}

// Index is index.json.
type Index struct {
	Version int     `json:"version"`
	Entries []Entry `json:"entries"`
}

// Recording is one response file: the request it answers and the response.
type Recording struct {
	Model    string         `json:"model"`
	Scenario string         `json:"scenario,omitempty"`
	Step     int            `json:"step"`
	Request  Request        `json:"request"`
	Response model.Response `json:"response"`
	// Arguments are the tool calls' arguments byte for byte: the indented response
	// above re-indents them, and a replay must hand back what the server sent.
	Arguments []string `json:"exact_arguments,omitempty"`
}

// Cassette is a recording directory, shared by every model of a run that uses it. It is
// safe for concurrent use.
type Cassette struct {
	dir    string
	getenv func(string) string

	mu      sync.Mutex
	entries map[string][]Entry // by key, in occurrence order
	byHash  map[string][]Entry // by Hash alone, for replay:DIR
	models  map[string]bool
	// recorded and played count each key's recordings and plays in this run.
	recorded, played map[string]int

	toolsWritten map[string]bool
	secretsOnce  sync.Once
}

var (
	openMu    sync.Mutex
	cassettes = map[string]*Cassette{}
)

// Open returns the cassette in dir, loading its index if there is one; every caller in the
// process gets the same *Cassette for the same directory. getenv (nil: os.Getenv) is read
// when recording, to keep secrets out of the files.
func Open(dir string, getenv func(string) string) (*Cassette, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("cassette %s: %w", dir, err)
	}
	openMu.Lock()
	defer openMu.Unlock()
	if c := cassettes[abs]; c != nil {
		return c, nil
	}
	if getenv == nil {
		getenv = os.Getenv
	}
	c := &Cassette{dir: abs, getenv: getenv, entries: map[string][]Entry{}, byHash: map[string][]Entry{},
		models: map[string]bool{}, recorded: map[string]int{}, played: map[string]int{}, toolsWritten: map[string]bool{}}
	b, err := readRecord(filepath.Join(abs, IndexFile))
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return nil, fmt.Errorf("cassette: %w", err)
	default:
		var idx Index
		if err := json.Unmarshal(b, &idx); err != nil {
			return nil, fmt.Errorf("cassette %s: %w", filepath.Join(dir, IndexFile), err)
		}
		for i, e := range idx.Entries {
			if !filepath.IsLocal(filepath.FromSlash(e.File)) {
				return nil, fmt.Errorf("cassette %s: entries[%d] (scenario %q, step %d): file %q leaves the cassette directory: a cassette's files are paths inside it",
					filepath.Join(dir, IndexFile), i, e.Scenario, e.Step, e.File)
			}
			c.add(e)
		}
	}
	cassettes[abs] = c
	return c, nil
}

// Dir is the cassette's absolute directory.
func (c *Cassette) Dir() string { return c.dir }

// Models returns the names of the models recorded, sorted.
func (c *Cassette) Models() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]string, 0, len(c.models))
	for m := range c.models {
		out = append(out, m)
	}
	sort.Strings(out)
	return out
}

// key identifies the recordings of one request: a scenario's own first, so that two
// scenarios asking the same question (the same prompt in two tasks) keep their answers.
func key(scenario, modelName, hash string) string {
	return scenario + "\x00" + modelName + "\x00" + hash
}

// add puts e in the maps, replacing an entry of the same key and occurrence. Callers hold mu.
func (c *Cassette) add(e Entry) {
	k := key(e.Scenario, e.Model, e.Hash)
	list := c.entries[k]
	for len(list) <= e.Occurrence {
		list = append(list, Entry{})
	}
	list[e.Occurrence] = e
	c.entries[k] = list
	c.models[e.Model] = true
	c.byHash[e.Hash] = append(c.byHash[e.Hash], e)
}

// record stores one response and rewrites the index, so that a run killed halfway leaves
// a cassette that holds every step it finished.
func (c *Cassette) record(modelName, scenario string, step int, req Request, tools []byte, resp *model.Response) error {
	hash := req.Hash()
	rec := Recording{Model: modelName, Scenario: scenario, Step: step, Request: req, Response: *resp}
	for _, c := range resp.ToolCalls {
		rec.Arguments = append(rec.Arguments, string(c.Arguments))
	}
	body, err := json.MarshalIndent(rec, "", "  ")
	if err != nil {
		return fmt.Errorf("record: %w", err)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	k := key(scenario, modelName, hash)
	occ := c.recorded[k]
	c.recorded[k]++
	name := fmt.Sprintf("%s/%03d-%s", slug(scenario), rec.Step, hash[:12])
	if occ > 0 {
		name += fmt.Sprintf("-%d", occ)
	}
	name += ".json"
	clean := c.secrets()
	if err := c.write(name, clean(body)); err != nil {
		return err
	}
	if !c.toolsWritten[req.Tools] {
		if err := c.write(filepath.Join("tools", req.Tools+".json"), clean(tools)); err != nil {
			return err
		}
		c.toolsWritten[req.Tools] = true
	}
	c.add(Entry{Model: modelName, Hash: hash, Occurrence: occ, Scenario: scenario, Step: rec.Step, File: filepath.ToSlash(name)})
	return c.writeIndex()
}

func (c *Cassette) writeIndex() error {
	idx := Index{Version: 1, Entries: []Entry{}}
	for _, list := range c.entries {
		for _, e := range list {
			if e.File != "" {
				idx.Entries = append(idx.Entries, e)
			}
		}
	}
	sort.Slice(idx.Entries, func(i, j int) bool {
		a, b := idx.Entries[i], idx.Entries[j]
		if a.Scenario != b.Scenario {
			return a.Scenario < b.Scenario
		}
		if a.Step != b.Step {
			return a.Step < b.Step
		}
		return a.File < b.File
	})
	b, err := json.MarshalIndent(idx, "", "  ")
	if err != nil {
		return fmt.Errorf("record: %w", err)
	}
	return c.write(IndexFile, b)
}

// write replaces a file atomically (temp file, rename): a reader or a crash never sees
// half of it.
func (c *Cassette) write(name string, b []byte) error {
	path := filepath.Join(c.dir, name)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("record: %w", err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".tmp-*")
	if err != nil {
		return fmt.Errorf("record: %w", err)
	}
	if _, err := tmp.Write(append(b, '\n')); err != nil {
		_ = tmp.Close() // the error above is the one returned
		_ = os.Remove(tmp.Name())
		return fmt.Errorf("record: %w", err)
	}
	if err := tmp.Close(); err != nil {
		_ = os.Remove(tmp.Name())
		return fmt.Errorf("record: %w", err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		_ = os.Remove(tmp.Name())
		return fmt.Errorf("record: %w", err)
	}
	return nil
}

// readRecord reads a cassette file: a cassette is committed, so a pull request may bring
// one; it is capped and its nesting checked before it is decoded.
func readRecord(path string) ([]byte, error) {
	b, err := bounded.ReadFile(path, bounded.Record)
	if err == nil {
		err = bounded.JSON(path, b, bounded.Record)
	}
	return b, err
}

// load reads one response file, inside the cassette directory: the index's paths are
// checked at Open, and the file is opened through an os.Root, so a link in a committed
// cassette that points out of it is refused too.
func (c *Cassette) load(e Entry) (*Recording, error) {
	b, err := c.readInside(filepath.FromSlash(e.File))
	if err != nil {
		return nil, fmt.Errorf("cassette: %w", err)
	}
	var r Recording
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("cassette %s: %w", filepath.Join(c.dir, e.File), err)
	}
	// The indented file re-indented the arguments; the hash and the diff saw them compact.
	for i := range r.Request.Messages {
		for j := range r.Request.Messages[i].ToolCalls {
			r.Request.Messages[i].ToolCalls[j].Arguments = canonicalArgs(r.Request.Messages[i].ToolCalls[j].Arguments)
		}
	}
	if len(r.Arguments) == len(r.Response.ToolCalls) {
		for i, a := range r.Arguments {
			r.Response.ToolCalls[i].Arguments = json.RawMessage(a)
		}
	}
	return &r, nil
}

// readInside reads the cassette's file name (relative) as readRecord does, never
// outside the cassette directory.
func (c *Cassette) readInside(name string) ([]byte, error) {
	path := filepath.Join(c.dir, name)
	f, err := os.OpenInRoot(c.dir, name)
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) && leaves(c.dir, path) {
			return nil, fmt.Errorf("%s: %s: leaves the cassette directory (a link out of it)", c.dir, filepath.ToSlash(name))
		}
		return nil, err
	}
	defer func() { _ = f.Close() }() // read only: Close loses no data
	b, err := bounded.ReadOpened(f, path, bounded.Record)
	if err == nil {
		err = bounded.JSON(path, b, bounded.Record)
	}
	return b, err
}

// leaves reports whether path resolves (its links followed) outside dir: why os.Root
// refused it, said in words.
func leaves(dir, path string) bool {
	d, err1 := filepath.EvalSymlinks(dir)
	p, err2 := filepath.EvalSymlinks(path)
	if err1 != nil || err2 != nil {
		return true // a dangling link out: os.Root refused it for leaving
	}
	rel, err := filepath.Rel(d, p)
	return err != nil || !filepath.IsLocal(rel)
}

// secrets returns the process's scrubber (runner/scrub), told first about the credentials
// in the environment the cassette was opened with: the values of credential variables and
// the user info of URLs (OPENAI_BASE_URL=https://user:pass@host). The runner never puts
// them in a request, but an agent can read one into the conversation, a server can echo
// one, and a cassette is meant to be committed.
func (c *Cassette) secrets() func([]byte) []byte {
	c.secretsOnce.Do(func() {
		scrub.AddEnviron(os.Environ())
		scrub.AddProviderEnv(c.getenv)
	})
	return scrub.JSON // every cassette file is a JSON document
}

// slug makes a scenario name a safe directory name.
func slug(s string) string {
	if s == "" {
		return "_"
	}
	var b strings.Builder
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_', r == '.':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	out := b.String()
	if strings.Trim(out, ".") == "" {
		return "_"
	}
	return out
}
