package cli

import (
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"
)

// intersperse moves a command's flags in front of its positional arguments, so that
// `runner run scenarios/ --model oracle` works like `runner run --model oracle scenarios/`
// (urfave/cli v2 stops reading flags at the first argument). Everything after "--" stays.
// A value flag left at the very end with no value is an error: moved to the front, it would
// silently take the first argument as its value.
func intersperse(app *cli.App, args []string) ([]string, error) {
	if len(args) < 2 {
		return args, nil
	}
	cmd, depth := findCommand(app.Commands, args[1:])
	if cmd == nil || cmd.SkipFlagParsing {
		return args, nil
	}
	head := len(args[:1]) + depth // program name and command names
	takesValue := map[string]bool{}
	for _, f := range cmd.Flags {
		_, isBool := f.(*cli.BoolFlag)
		for _, n := range f.Names() {
			takesValue[n] = !isBool
		}
	}
	var flags, positional []string
	rest := args[head:]
	for i := 0; i < len(rest); i++ {
		a := rest[i]
		if a == "--" {
			positional = append(positional, rest[i:]...)
			break
		}
		if !strings.HasPrefix(a, "-") || a == "-" {
			positional = append(positional, a)
			continue
		}
		flags = append(flags, a)
		name := strings.TrimLeft(a, "-")
		if !strings.Contains(name, "=") && takesValue[name] {
			if i+1 >= len(rest) {
				return nil, fmt.Errorf("flag needs an argument: %s", a)
			}
			flags = append(flags, rest[i+1])
			i++
		}
	}
	out := append([]string{}, args[:head]...)
	out = append(out, flags...)
	return append(out, positional...), nil
}

// findCommand finds the (sub)command named by the leading args and how many args name it.
func findCommand(cmds []*cli.Command, args []string) (*cli.Command, int) {
	if len(args) == 0 {
		return nil, 0
	}
	for _, c := range cmds {
		if c.HasName(args[0]) {
			if sub, depth := findCommand(c.Subcommands, args[1:]); sub != nil {
				return sub, depth + 1
			}
			return c, 1
		}
	}
	return nil, 0
}
