package main

import (
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/guiagent/guiagent/internal/config"
)

// command describes one subcommand for the root help and `guiagent CMD --help`.
type command struct {
	name     string
	synopsis string // arguments after the command name
	summary  string
	// flags writes the command's flags with their defaults; nil means it takes none.
	flags func(w io.Writer)
}

// configFlags prints the configuration flags every config.Load command takes.
func configFlags(name string) func(io.Writer) {
	return func(w io.Writer) {
		fs := config.FlagSet(name)
		if name == "doctor" {
			fs.Bool("all", false, "also show the settings left at their defaults and every backend detail")
		}
		printFlagSet(w, fs)
		if name == "serve" || name == "doctor" {
			printToolGroups(w)
		}
		fmt.Fprintln(w, "\nFlags name their "+config.EnvPrefix+"* environment variable; docs/configuration.md lists every variable.")
	}
}

// flagSetFlags prints the flags of a command with its own flag set.
func flagSetFlags(newFS func() *flag.FlagSet) func(io.Writer) {
	return func(w io.Writer) { printFlagSet(w, newFS()) }
}

// printFlagSet writes fs's flags, sorted, as the README spells them: two
// dashes (one for a one-letter flag such as -n), the value's name, the usage
// and the default, unless the default is the zero value or the usage already
// says what it is.
func printFlagSet(w io.Writer, fs *flag.FlagSet) {
	fs.VisitAll(func(f *flag.Flag) {
		dash := "--"
		if len(f.Name) == 1 {
			dash = "-"
		}
		arg, usage := flag.UnquoteUsage(f)
		head := "  " + dash + f.Name
		if arg != "" {
			head += " " + arg
		}
		if !zeroDefault(f) && !strings.Contains(usage, "default") {
			def := f.DefValue
			if fmt.Sprintf("%T", f.Value) == "*flag.stringValue" {
				def = strconv.Quote(def)
			}
			usage += " (default " + def + ")"
		}
		fmt.Fprintf(w, "%s\n        %s\n", head, strings.ReplaceAll(usage, "\n", "\n        "))
	})
}

// zeroDefault reports whether f's default is its type's zero value.
func zeroDefault(f *flag.Flag) bool {
	switch f.DefValue {
	case "", "false", "0", "0s":
		return true
	}
	return false
}

// commands is the one list of subcommands, in the order the root help shows them.
var commands = []command{
	{"serve", "[--http] [flags]", "serve MCP over stdio (the default command), or over Streamable HTTP on 127.0.0.1:60008 (/mcp) with the dashboard at / (--http)", configFlags("serve")},
	{"demo", "[flags] [TASK]", "run the sample form task in a private virtual desktop; offline with the built-in scripted model, or TASK with a configured model", configFlags("demo")},
	{"doctor", "[flags] [SCRIPT.yaml]", "check the display, input, clipboard, model configuration and run folder; exit 1 when something required fails. With a Midscene script: whether guiagent runs it, on the platform it names, and which " + config.EnvPrefix + " settings replace its MIDSCENE_ ones", configFlags("doctor")},
	{"release", "[--display :N]", "release keys and buttons a killed guiagent left held", configFlags("release")},
	{"bench", "capture [flags] | soak [-n N]", "capture: time N screenshots through the capture pipeline and print the medians as JSON; soak: N mixed atomic calls over stdio and HTTP on private Xvfbs, printing memory, goroutines and open files at start, middle and end as JSON", flagSetFlags(func() *flag.FlagSet { fs, _ := benchFlags(func(string) string { return "" }); return fs })},
	{"run", "FLOW.yaml [--var name=value ...] [--cache read-write|read-only|write-only|off] [--json] [--format flow|midscene] [--allow-javascript] [flags]", "run a YAML flow, or a Midscene script (recognised by its tasks with flow; docs/midscene.md); located elements replay from its cache (FLOW.cache.yaml) after their pixels are verified on the screen", configFlags("run")},
	{"eval", "SUITE.yaml [--model provider:model ...] [--repeat N] [--parallel N] [--out DIR] [--export trajectories] [--min-pass R] [flags] | diff A.json B.json", "run a YAML suite of tasks against models, each run on a private desktop, and score them (results.json, summary.html); diff says what regressed between two results", func(w io.Writer) {
		printFlagSet(w, evalFlags())
		fmt.Fprintln(w, "\nThe configuration flags of guiagent serve (API key, base URL, limits) apply to every run; --model here is eval's own.")
	}},
	{"runs", "[--kind task|session|flow] [--json]", "list recorded runs (tasks, MCP sessions, flows), newest first", flagSetFlags(func() *flag.FlagSet { fs, _ := runsFlags(); return fs })},
	{"report", "RUN_ID", "print the path of a run's HTML report (see guiagent runs), writing it if needed", nil},
	{"sample-app", "[flags]", "run the built-in sample X application the demo and tests use", flagSetFlags(func() *flag.FlagSet { fs, _ := sampleAppFlags(func(string) string { return "" }); return fs })},
	{"version", "", "print the version (also --version, -v)", nil},
	{"help", "[COMMAND]", "print this help, or a command's flags (also --help, -h, or COMMAND --help)", nil},
}

func findCommand(name string) (command, bool) {
	for _, c := range commands {
		if c.name == name {
			return c, true
		}
	}
	return command{}, false
}

// printUsage writes the root help: every command with its summary.
func printUsage(w io.Writer) {
	fmt.Fprint(w, "guiagent: an MCP server that lets AI agents see and operate a desktop.\n\nUsage:\n  guiagent [COMMAND] [flags]\n\nCommands:\n")
	for _, c := range commands {
		fmt.Fprintf(w, "  %-11s %s\n", c.name, c.summary)
	}
	fmt.Fprint(w, "\nWithout a command, guiagent serves MCP over stdio (same as guiagent serve).\n"+
		"Run 'guiagent COMMAND --help' for a command's flags. Configuration also comes from\n"+
		config.EnvPrefix+"* environment variables; flags win (see docs/configuration.md).\n")
}

// printCommandHelp writes one command's usage and flags.
func printCommandHelp(w io.Writer, c command) {
	fmt.Fprintf(w, "Usage: guiagent %s %s\n\n%s\n", c.name, c.synopsis, capitalize(c.summary))
	if c.flags == nil {
		fmt.Fprintln(w, "\nThis command takes no flags.")
		return
	}
	fmt.Fprintln(w, "\nFlags:")
	c.flags(w)
}

func capitalize(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:] + "."
}

// wantsHelp reports whether args ask for help: -h, -help or --help before any "--".
func wantsHelp(args []string) bool {
	for _, a := range args {
		switch a {
		case "--":
			return false
		case "-h", "-help", "--help":
			return true
		}
	}
	return false
}
