// Package complete writes shell completion scripts (bash, zsh, fish) for a
// program from its flag.FlagSet definitions, so the completions cannot
// drift from the flags: a flag added to the program is completed the next
// time the script is generated (`PROG completion SHELL`).
//
// What a script completes, in every shell:
//   - the program's flags as --NAME, and its subcommands as the first
//     word; after a subcommand, that subcommand's flags and words;
//   - a flag's value after it (as the next word; --NAME=VALUE is not
//     completed): the Choices given for it, else directories when the
//     flag's value name (the back-quoted word of its usage, see
//     flag.UnquoteUsage) has the word DIR (files too when the usage says
//     "file"), files when it has FILE or PATH (NAME=FILE too), and
//     nothing otherwise (a duration, a number, NAME=CMD);
//     a bool flag takes no value.
//
// Descriptions (zsh, fish) are the first clause of each flag's usage, cut
// to 60 characters. A flag whose usage says "repeatable" may be given
// again (zsh offers it again). Names are used as they are: a program or
// flag name must be made of letters, digits, '-', '_' and '.', which
// Write checks, so that no name can inject shell code into a script.
package complete

import (
	"flag"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strings"
)

// Shells are the shells Write knows.
var Shells = []string{"bash", "zsh", "fish"}

// Command is a program, or one of its subcommands.
type Command struct {
	Name    string              // program or subcommand name
	Summary string              // one line, for a subcommand (zsh, fish)
	Flags   []*flag.FlagSet     // its flags; several sets are merged
	Choices map[string][]string // flag name → the values it takes
	Words   []string            // the words it takes as arguments (e.g. bash zsh fish)
	Files   bool                // its arguments are paths (the program only)
	Sub     []Command           // subcommands (one level)
}

// opt is one flag as a script completes it.
type opt struct {
	name, desc string
	value      string // "": bool; "dir", "file", "choice", "any"
	choices    []string
	repeat     bool
}

var safeName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`)

// opts lists c's flags, by name, the first set winning a name.
func (c Command) opts() ([]opt, error) {
	seen := map[string]bool{}
	var out []opt
	var err error
	for _, fs := range c.Flags {
		fs.VisitAll(func(f *flag.Flag) {
			if seen[f.Name] {
				return
			}
			seen[f.Name] = true
			if len(f.Name) == 1 {
				return // -h and the like: aliases of a long flag, not offered as --h
			}
			if !safeName.MatchString(f.Name) {
				err = fmt.Errorf("complete: flag name %q: want letters, digits and the characters - _ . only", f.Name)
				return
			}
			valueName, usage := flag.UnquoteUsage(f)
			o := opt{name: f.Name, desc: summary(usage), repeat: strings.Contains(usage, "repeatable")}
			if b, ok := f.Value.(interface{ IsBoolFlag() bool }); ok && b.IsBoolFlag() {
				out = append(out, o)
				return
			}
			words := strings.FieldsFunc(strings.ToUpper(valueName), func(r rune) bool { return r < 'A' || r > 'Z' })
			has := func(ws ...string) bool {
				return slices.ContainsFunc(words, func(w string) bool { return slices.Contains(ws, w) })
			}
			switch {
			case c.Choices[f.Name] != nil:
				o.value, o.choices = "choice", c.Choices[f.Name]
			case has("DIR", "DIRS") && !strings.Contains(usage, "file"):
				o.value = "dir"
			case has("DIR", "DIRS", "FILE", "FILES", "PATH", "PATHS"):
				o.value = "file"
			default:
				o.value = "any"
			}
			out = append(out, o)
		})
	}
	for _, o := range out {
		for _, w := range o.choices {
			if !safeName.MatchString(w) {
				return nil, fmt.Errorf("complete: --%s value %q: want letters, digits and the characters - _ . only", o.name, w)
			}
		}
	}
	return out, err
}

// summary is the first clause of a usage, cut to 60 characters, without
// the characters a script would have to escape.
func summary(usage string) string {
	s := usage
	if i := strings.IndexAny(s, ";(:"); i > 0 {
		s = s[:i]
	}
	s = strings.Map(func(r rune) rune {
		switch r {
		case '\'':
			return '’'
		case '"', '\\', '`', '$', '[', ']', '(', ')', '\n', '\t':
			return ' '
		}
		return r
	}, s)
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > 60 {
		s = strings.TrimSpace(string(r[:59])) + "…"
	}
	return s
}

// Write writes the completion script of c for shell (one of Shells).
func Write(w io.Writer, shell string, c Command) error {
	cmds := append([]Command{c}, c.Sub...)
	for _, x := range cmds {
		if !safeName.MatchString(x.Name) {
			return fmt.Errorf("complete: command name %q: want letters, digits and the characters - _ . only", x.Name)
		}
		for _, w := range x.Words {
			if !safeName.MatchString(w) {
				return fmt.Errorf("complete: %s word %q: want letters, digits and the characters - _ . only", x.Name, w)
			}
		}
	}
	var b strings.Builder
	var err error
	switch shell {
	case "bash":
		err = bash(&b, c)
	case "zsh":
		err = zsh(&b, c)
	case "fish":
		err = fish(&b, c)
	default:
		return fmt.Errorf("shell %q: want %s", shell, strings.Join(Shells, ", "))
	}
	if err != nil {
		return err
	}
	_, err = io.WriteString(w, b.String())
	return err
}

// fn is a shell function name made of name.
func fn(parts ...string) string {
	return "_" + strings.NewReplacer("-", "_", ".", "_").Replace(strings.Join(parts, "__"))
}

func subNames(c Command) []string {
	var names []string
	for _, s := range c.Sub {
		names = append(names, s.Name)
	}
	return names
}

func bash(b *strings.Builder, c Command) error {
	fmt.Fprintf(b, "# bash completion for %s; generated by `%s completion bash`.\n", c.Name, c.Name)
	fmt.Fprintf(b, "# Load it with: source <(%s completion bash)\n\n", c.Name)
	for i, x := range append([]Command{c}, c.Sub...) {
		opts, err := x.opts()
		if err != nil {
			return err
		}
		fmt.Fprintf(b, "%s_%d() {\n\tlocal cur=$1 prev=$2\n\tcase $prev in\n", fn(c.Name), i)
		for _, o := range opts {
			if o.value == "" {
				continue
			}
			fmt.Fprintf(b, "\t-%s | --%s)\n\t\t", o.name, o.name)
			switch o.value {
			case "choice":
				fmt.Fprintf(b, "COMPREPLY=($(compgen -W '%s' -- \"$cur\"))", strings.Join(o.choices, " "))
			case "dir":
				b.WriteString("compopt -o filenames 2>/dev/null; COMPREPLY=($(compgen -d -- \"$cur\"))")
			case "file":
				b.WriteString("compopt -o filenames 2>/dev/null; COMPREPLY=($(compgen -f -- \"$cur\"))")
			default:
				b.WriteString("COMPREPLY=()")
			}
			b.WriteString("\n\t\treturn ;;\n")
		}
		b.WriteString("\tesac\n")
		var flags []string
		for _, o := range opts {
			flags = append(flags, "--"+o.name)
		}
		fmt.Fprintf(b, "\tif [[ $cur == -* ]]; then\n\t\tCOMPREPLY=($(compgen -W '%s' -- \"$cur\"))\n\t\treturn\n\tfi\n", strings.Join(flags, " "))
		words := x.Words
		if i == 0 {
			words = append(slices.Clone(words), subNames(c)...)
		}
		if i == 0 && c.Files {
			fmt.Fprintf(b, "\tcompopt -o filenames 2>/dev/null\n\tCOMPREPLY=($(compgen -W '%s' -- \"$cur\") $(compgen -f -- \"$cur\"))\n}\n\n", strings.Join(words, " "))
			continue
		}
		fmt.Fprintf(b, "\tCOMPREPLY=($(compgen -W '%s' -- \"$cur\"))\n}\n\n", strings.Join(words, " "))
	}
	// The first word picks the subcommand; flags before it are the
	// program's, so a subcommand is only ever the first word.
	fmt.Fprintf(b, "%s() {\n\tlocal cur=${COMP_WORDS[COMP_CWORD]} prev=\n", fn(c.Name))
	b.WriteString("\t((COMP_CWORD > 0)) && prev=${COMP_WORDS[COMP_CWORD-1]}\n")
	fmt.Fprintf(b, "\tlocal f=%s_0\n", fn(c.Name))
	if len(c.Sub) > 0 {
		b.WriteString("\tif ((COMP_CWORD > 1)); then\n\t\tcase ${COMP_WORDS[1]} in\n")
		for i, s := range c.Sub {
			fmt.Fprintf(b, "\t\t%s) f=%s_%d ;;\n", s.Name, fn(c.Name), i+1)
		}
		b.WriteString("\t\tesac\n\tfi\n")
	}
	b.WriteString("\t$f \"$cur\" \"$prev\"\n}\n")
	fmt.Fprintf(b, "complete -F %s %s\n", fn(c.Name), c.Name)
	return nil
}

// zspec is one flag as an _arguments spec.
func zspec(o opt) string {
	s := fmt.Sprintf("--%s[%s]", o.name, o.desc)
	if o.repeat {
		s = "*" + s
	}
	switch o.value {
	case "choice":
		s += fmt.Sprintf(":%s:(%s)", o.name, strings.Join(o.choices, " "))
	case "dir":
		s += ":" + o.name + ":_files -/"
	case "file":
		s += ":" + o.name + ":_files"
	case "any":
		s += ":" + o.name + ": "
	}
	return "'" + s + "'"
}

func zsh(b *strings.Builder, c Command) error {
	fmt.Fprintf(b, "#compdef %s\n# zsh completion for %s; generated by `%s completion zsh`.\n", c.Name, c.Name, c.Name)
	fmt.Fprintf(b, "# Load it with: source <(%s completion zsh), or save it as _%s in a directory of $fpath.\n\n", c.Name, c.Name)
	fmt.Fprintf(b, "%s() {\n", fn(c.Name))
	if len(c.Sub) > 0 {
		b.WriteString("\tif (( CURRENT > 2 )); then\n\t\tcase ${words[2]} in\n")
		for _, s := range c.Sub {
			opts, err := s.opts()
			if err != nil {
				return err
			}
			fmt.Fprintf(b, "\t\t%s)\n\t\t\tshift words\n\t\t\t(( CURRENT-- ))\n\t\t\t_arguments -S", s.Name)
			for _, o := range opts {
				fmt.Fprintf(b, " \\\n\t\t\t\t%s", zspec(o))
			}
			if len(s.Words) > 0 {
				fmt.Fprintf(b, " \\\n\t\t\t\t'*:word:(%s)'", strings.Join(s.Words, " "))
			}
			b.WriteString("\n\t\t\treturn ;;\n")
		}
		b.WriteString("\t\tesac\n\tfi\n")
	}
	opts, err := c.opts()
	if err != nil {
		return err
	}
	b.WriteString("\t_arguments -S")
	for _, o := range opts {
		fmt.Fprintf(b, " \\\n\t\t%s", zspec(o))
	}
	if len(c.Sub) > 0 {
		var subs []string
		for _, s := range c.Sub {
			subs = append(subs, fmt.Sprintf(`%s\:%s`, s.Name, strings.ReplaceAll(summary(s.Summary), " ", `\ `)))
		}
		fmt.Fprintf(b, " \\\n\t\t'1:command:((%s))'", strings.Join(subs, " "))
	}
	if c.Files {
		b.WriteString(" \\\n\t\t'*:path:_files'")
	}
	b.WriteString("\n}\n\n")
	fmt.Fprintf(b, "if [[ $zsh_eval_context[-1] == loadautofunc ]]; then\n\t%s \"$@\"\nelse\n\tcompdef %s %s\nfi\n", fn(c.Name), fn(c.Name), c.Name)
	return nil
}

func fish(b *strings.Builder, c Command) error {
	fmt.Fprintf(b, "# fish completion for %s; generated by `%s completion fish`.\n", c.Name, c.Name)
	fmt.Fprintf(b, "# Load it with: %s completion fish | source, or save it as ~/.config/fish/completions/%s.fish\n\n", c.Name, c.Name)
	fmt.Fprintf(b, "complete -c %s -e\n", c.Name)
	if !c.Files {
		fmt.Fprintf(b, "complete -c %s -f\n", c.Name)
	}
	subs := strings.Join(subNames(c), " ")
	for _, s := range c.Sub {
		fmt.Fprintf(b, "complete -c %s -n 'not __fish_seen_subcommand_from %s' -a %s -d '%s'\n", c.Name, subs, s.Name, summary(s.Summary))
	}
	for _, x := range append([]Command{c}, c.Sub...) {
		opts, err := x.opts()
		if err != nil {
			return err
		}
		cond := "__fish_seen_subcommand_from " + x.Name
		if x.Name == c.Name {
			cond = "not __fish_seen_subcommand_from " + subs
			if subs == "" {
				cond = "true"
			}
		}
		for _, o := range opts {
			fmt.Fprintf(b, "complete -c %s -n '%s' -l %s", c.Name, cond, o.name)
			switch o.value {
			case "choice":
				fmt.Fprintf(b, " -x -a '%s'", strings.Join(o.choices, " "))
			case "dir":
				b.WriteString(" -x -a '(__fish_complete_directories (commandline -ct))'")
			case "file":
				b.WriteString(" -r -F")
			case "any":
				b.WriteString(" -x")
			}
			fmt.Fprintf(b, " -d '%s'\n", o.desc)
		}
		if x.Name != c.Name && len(x.Words) > 0 {
			fmt.Fprintf(b, "complete -c %s -n '%s' -a '%s'\n", c.Name, cond, strings.Join(x.Words, " "))
		}
	}
	return nil
}
