// Package catalog assembles the full tool catalog: every family's tools plus the aliases
// that let models trained on the five source specs call them by their own names.
package catalog

import (
	"strings"

	"github.com/agentrunner/runner/tools"
	"github.com/agentrunner/runner/tools/complete"
	"github.com/agentrunner/runner/tools/exec"
	"github.com/agentrunner/runner/tools/files"
	"github.com/agentrunner/runner/tools/search"
	"github.com/agentrunner/runner/tools/web"
)

// Options configure the tools that need configuration.
type Options struct {
	Web web.Options
}

// New returns a registry holding the whole catalog and its aliases.
func New(opts Options) *tools.Registry {
	r := tools.NewRegistry()
	r.MustRegister(files.Tools()...)
	r.MustRegister(search.Tools()...)
	r.MustRegister(exec.Tools()...)
	r.MustRegister(web.Tools(opts.Web)...)
	r.MustRegister(complete.New())
	for _, a := range Aliases() {
		if err := r.AddAlias(a); err != nil {
			panic(err) // the catalog is static: a bad alias is a programming error
		}
	}
	return r
}

// Default returns the catalog configured from the environment.
func Default() *tools.Registry {
	return New(Options{Web: web.OptionsFromEnv()})
}

// Aliases are the other specs' names for our tools, each with its own parameter names.
func Aliases() []tools.Alias {
	listDir := map[string]string{"directory": "path"}
	searchCode := map[string]string{"query": "pattern", "regex": "is_regex", "pattern": "file_pattern", "directory": "path"}
	return []tools.Alias{
		{Name: "list_files", Target: "list_dir", Params: listDir},
		{Name: "list_directory", Target: "list_dir", Params: listDir},
		{Name: "search_code", Target: "grep_search", Params: searchCode},
		{Name: "run_command", Target: "run_in_terminal", Rewrite: appendArguments},
		{Name: "shell", Target: "run_in_terminal", Rewrite: appendArguments},
		{Name: "fetch", Target: "fetch_webpage"},
		{Name: "web_fetch", Target: "fetch_webpage"},
	}
}

// appendArguments folds DraCode's separate "arguments" string into the command line.
func appendArguments(args tools.Args) {
	extra, ok := args["arguments"].(string)
	delete(args, "arguments")
	if !ok || strings.TrimSpace(extra) == "" {
		return
	}
	if cmd, ok := args["command"].(string); ok {
		args["command"] = cmd + " " + extra
	}
}
