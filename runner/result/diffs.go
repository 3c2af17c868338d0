package result

// DiffsFile is the name of the file beside result.json that holds the text diffs of what
// the agent changed (Diffs, JSON). It is for reading only: no verdict, report total or
// merge depends on it.
const DiffsFile = "changes.json"

// Diffs are unified diffs of the workspace's text files the agent created, changed or
// deleted, from a snapshot taken before it acted. Their content is the agent's: data to
// show, escaped, never to interpret.
type Diffs struct {
	Files []FileDiff `json:"files"`
	// Omitted counts changed files left out once the diffs reached their total cap.
	Omitted int `json:"omitted,omitempty"`
	// Note says what limited the snapshot or the diffs as a whole ("" when nothing did).
	Note string `json:"note,omitempty"`
}

// FileDiff is one file's diff, or why there is none (Skipped).
type FileDiff struct {
	Path string `json:"path"`
	// Status is created, changed or deleted.
	Status string `json:"status"`
	// Diff is the unified diff (--- a/PATH, +++ b/PATH, hunks); "" when Skipped.
	Diff string `json:"diff,omitempty"`
	// Added and Removed count the diff's lines.
	Added   int `json:"added"`
	Removed int `json:"removed"`
	// Skipped says why no diff is shown: a binary file, one larger than the per-file
	// cap, a snapshot that had used its total, something other than a regular file.
	Skipped string `json:"skipped,omitempty"`
	// Truncated is set when Diff was cut at the per-diff cap.
	Truncated bool `json:"truncated,omitempty"`
}

// Diff statuses.
const (
	DiffCreated = "created"
	DiffChanged = "changed"
	DiffDeleted = "deleted"
)
