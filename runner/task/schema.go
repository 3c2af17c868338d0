package task

import _ "embed" // for the schema

//go:embed task.schema.json
var schema []byte

//go:embed suite.schema.json
var suiteSchema []byte

// SuiteSchemaURL is where the suite file's published schema lives.
const SuiteSchemaURL = "https://raw.githubusercontent.com/agentrunner/runner/main/runner/task/suite.schema.json"

// SuiteSchema returns the JSON Schema of the suite file (runner.yaml): the task file keys
// a suite may set. Generated, as Schema is, by runner/schemas.
func SuiteSchema() []byte {
	return append([]byte(nil), suiteSchema...)
}

// SchemaURL is where the published schema lives, for editors:
// put "# yaml-language-server: $schema=<SchemaURL>" at the top of a task file.
const SchemaURL = "https://raw.githubusercontent.com/agentrunner/runner/main/runner/task/task.schema.json"

// Schema returns the JSON Schema (draft 2020-12) of the task file format. It describes
// every key and assertion kind; Load remains the authority (it also checks regexes, tool
// names and directories, which a schema cannot). The file is generated from this
// package's types by runner/schemas.Task (go test ./runner/schemas -update).
func Schema() []byte {
	return append([]byte(nil), schema...)
}
