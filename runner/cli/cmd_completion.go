package cli

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/agentrunner/runner/runner/schemas"
)

// The scripts ask the binary what fits the word being completed: they run
// `runner WORDS... CUR --generate-bash-completion` (CUR the word under the cursor, maybe
// empty) and get one candidate a line. A line ":taskfiles" asks the shell for .yaml and .yml
// files and directories, ":dirs" for directories; nothing at all means any file. So
// `runner run <TAB>` offers task files, never urfave's "help h".
const (
	completeFlag    = "--generate-bash-completion"
	wantTaskFiles   = ":taskfiles"
	wantDirectories = ":dirs"
)

// bashCompletion is the bash side (bash 3.2 and later; names with spaces stay whole).
const bashCompletion = `# runner bash completion: source <(runner completion bash)
_runner_complete() {
  local cur line words=() files=""
  COMPREPLY=()
  cur="${COMP_WORDS[COMP_CWORD]}"
  while IFS= read -r line; do
    case "$line" in
      :taskfiles|:dirs) files="$line" ;;
      ?*) words+=("$line") ;;
    esac
  done < <("${COMP_WORDS[@]:0:COMP_CWORD}" "$cur" --generate-bash-completion 2>/dev/null)
  if [[ ${#words[@]} -gt 0 ]]; then
    while IFS= read -r line; do COMPREPLY+=("$line"); done < <(compgen -W "${words[*]}" -- "$cur")
  fi
  if [[ -n "$files" ]]; then
    compopt -o filenames 2>/dev/null
    while IFS= read -r line; do [[ -n "$line" ]] && COMPREPLY+=("$line"); done < <(
      compgen -d -- "$cur"
      if [[ "$files" == :taskfiles ]]; then
        compgen -f -X '!*.yaml' -- "$cur"
        compgen -f -X '!*.yml' -- "$cur"
      fi)
  fi
  return 0
}
complete -o bashdefault -o default -F _runner_complete runner
`

// zshCompletion is the zsh side: the same question, files when the answer is empty.
const zshCompletion = `#compdef runner
# runner zsh completion: source <(runner completion zsh)
_runner() {
  local -a answer opts
  local files="" line
  answer=("${(@f)$(${words[1,CURRENT-1]} "${words[CURRENT]}" --generate-bash-completion 2>/dev/null)}")
  for line in "${answer[@]}"; do
    case "$line" in
      :taskfiles|:dirs) files="$line" ;;
      ?*) opts+=("$line") ;;
    esac
  done
  (( ${#opts} )) && _describe 'values' opts
  case "$files" in
    :taskfiles) _files -g '*.(yaml|yml)' ;;
    :dirs) _files -/ ;;
    *) (( ${#opts} )) || _files ;;
  esac
}
compdef _runner runner
`

// fishArgs adds what urfave's generated fish script lacks: the arguments of the commands
// that take task files or output directories.
const fishArgs = `complete -c runner -n '__fish_seen_subcommand_from run bench validate check' -k -a '(__fish_complete_suffix .yaml; __fish_complete_suffix .yml)'
complete -c runner -n '__fish_seen_subcommand_from merge view show import' -a '(__fish_complete_directories)'
`

// complete answers the scripts' question: words are the command line's words after the
// program name and before the cursor's, cur the word being completed.
func complete(app *cli.App, words []string, cur string, w io.Writer) {
	cmd, depth := findCommand(app.Commands, words)
	var lines []string
	switch {
	case strings.HasPrefix(cur, "-"):
		flags := slices.Concat(app.Flags, []cli.Flag{cli.HelpFlag, cli.VersionFlag})
		if cmd != nil {
			flags = slices.Concat(cmd.Flags, []cli.Flag{cli.HelpFlag})
		}
		for _, f := range flags {
			for _, n := range f.Names() {
				if dashed := "-" + n; len(n) > 1 {
					dashed = "--" + n
					if strings.HasPrefix(dashed, cur) {
						lines = append(lines, dashed)
					}
				} else if cur == "-" {
					lines = append(lines, dashed)
				}
			}
		}
	case cmd == nil:
		lines = visibleCommands(app.Commands)
	default:
		if v := valueOf(cmd, words[depth:]); v != "" {
			// The word is a flag's value: directories for a DIR, any file otherwise.
			if v == "DIR" {
				lines = append(lines, wantDirectories)
			}
			break
		}
		args := positional(cmd, words[depth:])
		if args == 0 {
			lines = visibleCommands(cmd.Subcommands)
		}
		lines = append(lines, argCompletions(cmd, args)...)
	}
	for _, l := range lines {
		fmt.Fprintln(w, l)
	}
}

// argCompletions is what cmd's argument number n (from 0) can be.
func argCompletions(cmd *cli.Command, n int) []string {
	switch cmd.Name {
	case "run", "bench", "validate", "check":
		return []string{wantTaskFiles}
	case "merge", "view", "import":
		return []string{wantDirectories}
	case "show":
		if n == 0 {
			return []string{wantDirectories}
		}
	case "completion":
		return []string{"bash", "zsh", "fish"}
	case "schema":
		return schemas.Names
	}
	return nil
}

func visibleCommands(cmds []*cli.Command) []string {
	var names []string
	for _, c := range cmds {
		if !c.Hidden && c.Name != "help" {
			names = append(names, c.Name)
		}
	}
	return names
}

// valueOf is the placeholder (DIR, FILE, N...) of the value flag that ends words, or "".
func valueOf(cmd *cli.Command, words []string) string {
	if len(words) == 0 {
		return ""
	}
	last := words[len(words)-1]
	if !strings.HasPrefix(last, "-") || strings.Contains(last, "=") {
		return ""
	}
	name := strings.TrimLeft(last, "-")
	for _, f := range cmd.Flags {
		if !slices.Contains(f.Names(), name) {
			continue
		}
		if df, ok := f.(cli.DocGenerationFlag); ok && df.TakesValue() {
			if _, ph, ok := strings.Cut(df.GetUsage(), "`"); ok {
				ph, _, _ = strings.Cut(ph, "`")
				return ph
			}
			return "value"
		}
	}
	return ""
}

// positional counts the arguments in words (flags and their values left out).
func positional(cmd *cli.Command, words []string) int {
	n := 0
	for i := 0; i < len(words); i++ {
		switch {
		case words[i] == "--":
			return n + len(words) - i - 1
		case strings.HasPrefix(words[i], "-") && words[i] != "-":
			if valueOf(cmd, words[:i+1]) != "" {
				i++
			}
		default:
			n++
		}
	}
	return n
}

func completionCommand(app *cli.App, stdio IO) *cli.Command {
	return &cli.Command{
		Name:      "completion",
		Usage:     "print a shell completion script: bash, zsh or fish",
		ArgsUsage: "bash|zsh|fish",
		Description: "Examples:\n" +
			"   source <(runner completion bash)           # ~/.bashrc\n" +
			"   source <(runner completion zsh)            # ~/.zshrc, after compinit\n" +
			"   runner completion fish > ~/.config/fish/completions/runner.fish",
		Action: func(c *cli.Context) error {
			return writeCompletion(app, c.Args().First(), c.NArg(), stdio.Stdout)
		},
	}
}

func writeCompletion(app *cli.App, shell string, nargs int, w io.Writer) error {
	if nargs != 1 {
		return usageError("completion: want one shell: bash, zsh or fish")
	}
	var script string
	switch shell {
	case "bash":
		script = bashCompletion
	case "zsh":
		script = zshCompletion
	case "fish":
		// v2 generates fish completions from the command and flag definitions.
		s, err := app.ToFishCompletion()
		if err != nil {
			return fmt.Errorf("completion: fish: %w", err)
		}
		script = s + fishArgs
	default:
		return usageError("completion: %q: want bash, zsh or fish", shell)
	}
	_, err := io.WriteString(w, script)
	return err
}
