package files

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"strings"
	"unicode/utf8"

	"github.com/agentrunner/runner/tools"
)

// ReadFile is the read_file tool: a file's text, optionally a line range, or its bytes as
// base64.
type ReadFile struct{}

// Spec implements tools.Tool.
func (ReadFile) Spec() tools.Spec {
	return tools.Spec{
		Name: "read_file",
		Description: "Read a file in the workspace. Returns the exact text (no line numbers added), so you can copy " +
			"it into replace_string_in_file. For long files pass start_line and end_line (1-based, inclusive) to read " +
			"a part; the result says how many lines the file has. Files over 10 MB are truncated with a warning. " +
			"Binary files get a warning and a hex dump of their first 1 KB; use encoding \"base64\" for their raw bytes.",
		Parameters: tools.Object(map[string]*tools.Schema{
			"path":       pathProp("File to read."),
			"start_line": tools.Integer("First line to return, 1-based. Omit to start at the first line.").WithRange(1, math.MaxInt32),
			"end_line":   tools.Integer("Last line to return, 1-based and inclusive. Omit to read to the end of the file.").WithRange(1, math.MaxInt32),
			"encoding": tools.String("How to return the content: \"utf-8\" (text, the default) or \"base64\" (raw bytes; "+
				"start_line and end_line do not apply).").WithEnum("utf-8", "base64").WithDefault("utf-8"),
		}, "path"),
		Risk: tools.RiskReadOnly,
	}
}

// Validate implements tools.Tool.
func (ReadFile) Validate(args tools.Args, ws *tools.Workspace) *tools.Error {
	if _, err := resolveArg(ws, args, "path", true); err != nil {
		return err
	}
	if args.String("encoding") == "base64" && (args.Has("start_line") || args.Has("end_line")) {
		return tools.Errorf(tools.CodeInvalidArgument, "Omit start_line and end_line, or use encoding \"utf-8\".",
			"start_line and end_line only apply to encoding \"utf-8\"")
	}
	if args.Has("start_line") && args.Has("end_line") && args.Int("end_line") < args.Int("start_line") {
		return tools.Errorf(tools.CodeInvalidArgument, "Give an end_line at or after start_line.",
			"end_line %d is before start_line %d", args.Int("end_line"), args.Int("start_line"))
	}
	return nil
}

// RequiresApproval implements tools.Tool: reading never does.
func (ReadFile) RequiresApproval(tools.Args, *tools.Workspace) bool { return false }

// Execute implements tools.Tool.
func (ReadFile) Execute(ctx context.Context, args tools.Args, ws *tools.Workspace) tools.Result {
	rel, perr := resolveArg(ws, args, "path", true)
	if perr != nil {
		return tools.Fail(perr)
	}
	fi, err := ws.Root().Stat(rel)
	if err != nil {
		return tools.Fail(tools.FileError(err, rel))
	}
	if fi.IsDir() {
		return tools.Failf(tools.CodeIsADirectory, "Use list_dir to see a directory's contents.", "'%s' is a directory, not a file", rel)
	}
	if !fi.Mode().IsRegular() {
		// Opening a FIFO or a device could block forever or never end.
		return tools.Failf(tools.CodeInvalidArgument, "", "'%s' is not a regular file (%s)", rel, fi.Mode().Type())
	}
	f, err := ws.Root().Open(rel)
	if err != nil {
		return tools.Fail(tools.FileError(err, rel))
	}
	defer func() { _ = f.Close() }() // read only: Close loses no data

	start, end := 1, math.MaxInt
	ranged := args.Has("start_line") || args.Has("end_line")
	if args.Has("start_line") {
		start = args.Int("start_line")
	}
	if args.Has("end_line") {
		end = args.Int("end_line")
	}
	base64Mode := args.String("encoding") == "base64"

	// Size the buffer to the file: most files an agent reads are small, and a 64 KiB
	// buffer per call was a quarter of a read_file step's allocations.
	br := bufio.NewReaderSize(f, int(min(max(fi.Size()+1, 8<<10), 64<<10)))
	head, _ := br.Peek(8 << 10)
	if !base64Mode && isBinary(head, fi.Size()) {
		return binaryResult(rel, head, fi.Size()).
			WithMeta("file_size_bytes", fi.Size()).WithMeta("modified", modTime(fi.ModTime()))
	}
	sc, err := scanLines(ctx, br, start, end, MaxReadBytes)
	if err != nil {
		return tools.Fail(tools.FileError(fmt.Errorf("read: %w", err), rel))
	}
	if start > 1 && start > sc.total {
		return tools.Failf(tools.CodeInvalidArgument, fmt.Sprintf("Give a start_line between 1 and %d.", max(sc.total, 1)),
			"start_line %d is past the end of '%s', which has %s", start, rel, plural(sc.total, "line"))
	}
	return readResult(rel, fi, sc, readRange{start: start, end: end, ranged: ranged}, base64Mode)
}

// readRange is the lines read_file was asked for: start..end, ranged when either was given.
type readRange struct {
	start, end int
	ranged     bool
}

// readResult renders what scanLines found: the content (or its base64) under a header
// saying which lines it is, warnings first, and the metadata.
func readResult(rel string, fi fs.FileInfo, sc scan, rg readRange, base64Mode bool) tools.Result {
	start, end, ranged := rg.start, rg.end, rg.ranged
	content := sc.out
	if sc.truncated && !base64Mode {
		content = cutToLine(content)
	}
	returned := countLines(content)
	if base64Mode {
		returned = 0
	}
	res := tools.OK("")
	var warnings []string
	if sc.truncated {
		warnings = append(warnings, fmt.Sprintf("'%s' is %d bytes; the output is truncated to its first %d bytes. %s",
			rel, fi.Size(), len(content), "Use start_line and end_line to read the rest."))
	}
	var header string
	switch {
	case base64Mode:
		res.Output = base64.StdEncoding.EncodeToString(content)
	case fi.Size() == 0:
		header = fmt.Sprintf("[File '%s' is empty (0 bytes)]", rel)
	case ranged || sc.truncated:
		last := start + returned - 1
		header = fmt.Sprintf("[Lines %d-%d of %d in '%s']", start, last, sc.total, rel)
		if returned == 0 {
			header = fmt.Sprintf("[No lines returned; '%s' has %s]", rel, plural(sc.total, "line"))
		}
		if end != math.MaxInt && end > sc.total {
			header += fmt.Sprintf(" (end_line %d is past the end of the file)", end)
		}
	}
	if !base64Mode {
		res.Output = string(content)
		if header != "" && len(content) > 0 {
			res.Output = header + "\n" + res.Output
		} else if header != "" {
			res.Output = header
		}
	}
	if len(warnings) > 0 {
		res.Output = "Warning: " + strings.Join(warnings, "\nWarning: ") + "\n\n" + res.Output
		res = res.WithMeta("warnings", warnings)
	}
	return res.WithMeta("total_lines", sc.total).
		WithMeta("lines_returned", returned).
		WithMeta("file_size_bytes", fi.Size()).
		WithMeta("modified", modTime(fi.ModTime())).
		WithMeta("truncated", sc.truncated).
		WithMeta("encoding", encodingName(base64Mode))
}

// scan is what scanLines found.
type scan struct {
	out       []byte // the requested lines, at most limit bytes
	total     int    // lines in the whole file
	truncated bool   // out stopped at limit
}

// scanLines streams r, keeping lines start..end (1-based, inclusive) up to limit bytes and
// counting every line, so that a huge file costs time but not memory.
func scanLines(ctx context.Context, r *bufio.Reader, start, end, limit int) (scan, error) {
	var s scan
	var buf bytes.Buffer
	line := 1
	partial := false // the last chunk read did not end a line
	for chunks := 0; ; chunks++ {
		if chunks%1024 == 0 && ctx.Err() != nil {
			return s, ctx.Err()
		}
		chunk, err := r.ReadSlice('\n')
		if len(chunk) > 0 {
			if line >= start && line <= end && !s.truncated {
				room := limit - buf.Len()
				if len(chunk) > room {
					buf.Write(chunk[:room])
					s.truncated = true
				} else {
					buf.Write(chunk)
				}
			}
			partial = chunk[len(chunk)-1] != '\n'
			if !partial {
				line++
			}
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return s, err
		}
	}
	s.total = line - 1
	if partial {
		s.total++
	}
	s.out = buf.Bytes()
	return s, nil
}

// cutToLine trims truncated text back to its last complete line, or failing that to a
// whole UTF-8 character, so the model never sees half a line or half a rune.
func cutToLine(b []byte) []byte {
	if i := bytes.LastIndexByte(b, '\n'); i >= 0 {
		return b[:i+1]
	}
	for len(b) > 0 && !utf8.Valid(b) {
		b = b[:len(b)-1]
	}
	return b
}

// countLines counts lines the way editors number them: a final line without a newline
// still counts, an empty text has none.
func countLines(b []byte) int {
	n := bytes.Count(b, []byte{'\n'})
	if len(b) > 0 && b[len(b)-1] != '\n' {
		n++
	}
	return n
}

// isBinary guesses from the head of a file: a NUL byte or invalid UTF-8 means binary. A
// rune cut at the end of a head shorter than the file does not count.
func isBinary(head []byte, size int64) bool {
	if bytes.IndexByte(head, 0) >= 0 {
		return true
	}
	if int64(len(head)) < size {
		for i := 0; i < utf8.UTFMax && len(head) > 0 && !utf8.Valid(head); i++ {
			head = head[:len(head)-1]
		}
	}
	return !utf8.Valid(head)
}

func binaryResult(rel string, head []byte, size int64) tools.Result {
	preview := head[:min(len(head), 1024)]
	warning := fmt.Sprintf("'%s' looks like a binary file (%d bytes); showing a hex dump of its first %d bytes. "+
		"Use encoding \"base64\" to read the raw bytes.", rel, size, len(preview))
	res := tools.OK("Warning: " + warning + "\n\n" + hex.Dump(preview))
	return res.WithMeta("binary", true).WithMeta("warnings", []string{warning}).
		WithMeta("total_lines", 0).WithMeta("lines_returned", 0)
}

func encodingName(base64Mode bool) string {
	if base64Mode {
		return "base64"
	}
	return "utf-8"
}
