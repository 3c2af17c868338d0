package task

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/agentrunner/runner/runner/bounded"
)

// MaxDatasetBytes caps a dataset file: rows are held in memory, one case each.
const MaxDatasetBytes = 64 << 20

// datasetRow is one row of a dataset and where it was written.
type datasetRow struct {
	vals map[string]any
	pos  Position
}

// readDataset reads a dataset by its extension: .csv (a header row names the columns),
// .jsonl or .ndjson (one object a line), .json (a list of objects), .yaml or .yml (a list
// of mappings). Every problem names the file and the row's line.
func readDataset(path string) ([]datasetRow, error) {
	data, err := readCapped(path, MaxDatasetBytes)
	if err != nil {
		return nil, err
	}
	switch ext := strings.ToLower(filepath.Ext(path)); ext {
	case ".csv":
		return readCSV(path, data)
	case ".jsonl", ".ndjson":
		return readJSONLines(path, data)
	case ".json":
		return readJSONList(path, data)
	case ".yaml", ".yml":
		return readYAMLList(path, data)
	default:
		return nil, fmt.Errorf("dataset %s: unknown format %q: use .csv, .jsonl, .json or .yaml", path, ext)
	}
}

// readCapped reads a file of at most limit bytes, refusing a larger one by name rather than
// running out of memory on it.
func readCapped(path string, limit int64) ([]byte, error) {
	lim := bounded.Dataset
	lim.Bytes = limit
	data, err := bounded.ReadFile(path, lim)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return nil, fmt.Errorf("no such file %s (a dataset path is relative to the task file)", path)
	case errors.Is(err, bounded.ErrTooLarge):
		return nil, fmt.Errorf("dataset %s is larger than %d MiB; split it into smaller files", path, limit>>20)
	case err != nil:
		return nil, fmt.Errorf("dataset: %w", err)
	}
	return data, nil
}

func readCSV(path string, data []byte) ([]datasetRow, error) {
	r := csv.NewReader(bytes.NewReader(data))
	header, err := r.Read()
	if err != nil {
		return nil, fmt.Errorf("dataset %s: header row: %w", path, err)
	}
	for i, h := range header {
		if strings.TrimSpace(h) == "" {
			return nil, fmt.Errorf("%s:1: column %d has no name in the header row", path, i+1)
		}
	}
	var rows []datasetRow
	for {
		rec, err := r.Read()
		if err == io.EOF {
			return rows, nil
		}
		if err != nil {
			return nil, fmt.Errorf("dataset %s: %w", path, err)
		}
		line, _ := r.FieldPos(0)
		vals := make(map[string]any, len(header))
		for i, h := range header {
			vals[h] = rec[i]
		}
		rows = append(rows, datasetRow{vals: vals, pos: Position{File: path, Line: line, Column: 1}})
	}
}

func readJSONLines(path string, data []byte) ([]datasetRow, error) {
	if err := bounded.JSON(path, data, bounded.Dataset); err != nil {
		return nil, err
	}
	var rows []datasetRow
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 64<<10), MaxDatasetBytes)
	for line := 1; sc.Scan(); line++ {
		text := bytes.TrimSpace(sc.Bytes())
		if len(text) == 0 {
			continue
		}
		var vals map[string]any
		if err := json.Unmarshal(text, &vals); err != nil || vals == nil {
			return nil, fmt.Errorf("%s:%d: each line must be a JSON object: %v", path, line, jsonProblem(err))
		}
		rows = append(rows, datasetRow{vals: vals, pos: Position{File: path, Line: line, Column: 1}})
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("dataset %s: %w", path, err)
	}
	return rows, nil
}

func jsonProblem(err error) string {
	if err == nil {
		return "got null"
	}
	return err.Error()
}

// readJSONList reads a JSON list of objects. JSON is YAML, so the YAML reader gives each
// row its line.
func readJSONList(path string, data []byte) ([]datasetRow, error) {
	return readYAMLList(path, data)
}

func readYAMLList(path string, data []byte) ([]datasetRow, error) {
	file, err := bounded.ParseYAML(path, data, bounded.Dataset)
	if err != nil {
		return nil, syntaxProblem(path, err)
	}
	if len(file.Docs) == 0 || file.Docs[0].Body == nil {
		return nil, nil
	}
	d := &decoder{file: path}
	d.collectAnchors(file.Docs[0].Body)
	items, _ := d.items(file.Docs[0].Body, "")
	var rows []datasetRow
	for i, it := range items {
		f := fmt.Sprintf("row %d", i+1)
		v, ok := d.toAny(it, f)
		m, isMap := v.(map[string]any)
		if ok && !isMap {
			d.fail(it, f, "expected a mapping of column names to values, got %s", describe(it))
		}
		if len(d.errs) > 0 {
			return nil, d.errs[0]
		}
		rows = append(rows, datasetRow{vals: m, pos: d.posOf(it)})
	}
	if len(d.errs) > 0 {
		return nil, d.errs[0]
	}
	return rows, nil
}
