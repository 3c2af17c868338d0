package bench

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/agentrunner/runner/runner/bounded"
	"github.com/agentrunner/runner/runner/scrub"
)

// Report file names in the output directory.
const (
	JSONFile     = "bench.json"
	MarkdownFile = "bench.md"
	HTMLFile     = "bench.html"
)

// WriteFiles writes bench.json, bench.md and bench.html into dir. cmp, when not nil, is
// the comparison with a baseline, shown in the markdown and the page.
func WriteFiles(dir string, r *Report, cmp *Comparison) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("bench reports: %w", err)
	}
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return fmt.Errorf("bench.json: %w", err)
	}
	var md, page bytes.Buffer
	if err := WriteMarkdown(&md, r, cmp); err != nil {
		return fmt.Errorf("bench.md: %w", err)
	}
	if err := WriteHTML(&page, r, cmp); err != nil {
		return fmt.Errorf("bench.html: %w", err)
	}
	for name, data := range map[string][]byte{JSONFile: append(b, '\n'), MarkdownFile: md.Bytes(), HTMLFile: page.Bytes()} {
		write := scrub.Output{}.WriteFile
		if name == JSONFile {
			write = scrub.Output{}.WriteJSON // its strings as a reader decodes them
		}
		if err := write(filepath.Join(dir, name), data); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
	}
	return nil
}

// ReadFile reads a bench.json, checking its format version.
func ReadFile(path string) (*Report, error) {
	b, err := bounded.ReadFile(path, bounded.Record)
	if err == nil {
		err = bounded.JSON(path, b, bounded.Record)
	}
	if err != nil {
		return nil, fmt.Errorf("read bench report: %w", err)
	}
	var r Report
	dec := json.NewDecoder(bytes.NewReader(b))
	if err := dec.Decode(&r); err != nil {
		return nil, fmt.Errorf("%s: not a bench report: %w", path, err)
	}
	if r.Version < 1 || r.Version > FormatVersion {
		return nil, fmt.Errorf("%s: bench report format version %d, this runner reads versions 1 to %d", path, r.Version, FormatVersion)
	}
	return &r, nil
}
