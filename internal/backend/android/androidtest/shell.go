package androidtest

import (
	"fmt"
	"strings"
)

// shellCommand is one simple command of a shell line and the operator
// that joins it to the next ("", ";", "&&", "||").
type shellCommand struct {
	args []string
	op   string
}

// parseShell splits a command line as the device's shell (mksh) would for
// the subset the fake runs: words with '...', "..." and \ quoting, $NAME
// expansion (to nothing, or the variable's value), and the ; && ||
// separators. Whatever else would make sh do something else (a pipe, a
// redirection, a background &, a command substitution, parentheses) is a
// syntax error, so a caller that forgot to quote such a character fails
// loudly rather than typing something else.
func parseShell(line string, vars map[string]string) ([]shellCommand, error) {
	var cmds []shellCommand
	var args []string
	var word strings.Builder
	inWord := false
	end := func() {
		if inWord {
			args = append(args, word.String())
			word.Reset()
			inWord = false
		}
	}
	endCmd := func(op string) error {
		end()
		if len(args) == 0 {
			if op == "" || op == ";" {
				return nil
			}
			return fmt.Errorf("syntax error: '%s' unexpected", op)
		}
		cmds = append(cmds, shellCommand{args: args, op: op})
		args = nil
		return nil
	}
	expand := func(s string, i int) (string, int) { // s[i] == '$'
		j := i + 1
		if j < len(s) && s[j] == '{' {
			k := strings.IndexByte(s[j:], '}')
			if k < 0 {
				return "$", i + 1
			}
			return vars[s[j+1:j+k]], j + k + 1
		}
		for j < len(s) && (s[j] == '_' || s[j] >= 'a' && s[j] <= 'z' || s[j] >= 'A' && s[j] <= 'Z' || s[j] >= '0' && s[j] <= '9' && j > i+1) {
			j++
		}
		if j == i+1 {
			if j < len(s) && strings.IndexByte("?$!#*@0123456789-", s[j]) >= 0 {
				return "", j + 1 // special parameters: nothing the fake keeps
			}
			return "$", i + 1
		}
		return vars[s[i+1:j]], j
	}
	for i := 0; i < len(line); {
		c := line[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n':
			end()
			if c == '\n' {
				if err := endCmd(";"); err != nil {
					return nil, err
				}
			}
			i++
		case c == '\'':
			k := strings.IndexByte(line[i+1:], '\'')
			if k < 0 {
				return nil, fmt.Errorf("syntax error: unterminated quoted string")
			}
			word.WriteString(line[i+1 : i+1+k])
			inWord = true
			i += k + 2
		case c == '"':
			inWord = true
			i++
			closed := false
			for i < len(line) {
				d := line[i]
				if d == '"' {
					closed = true
					i++
					break
				}
				if d == '\\' && i+1 < len(line) && strings.IndexByte("$`\"\\\n", line[i+1]) >= 0 {
					if line[i+1] != '\n' {
						word.WriteByte(line[i+1])
					}
					i += 2
					continue
				}
				if d == '$' {
					v, j := expand(line, i)
					word.WriteString(v)
					i = j
					continue
				}
				if d == '`' {
					return nil, fmt.Errorf("command substitution with ` is not run by this fake shell")
				}
				word.WriteByte(d)
				i++
			}
			if !closed {
				return nil, fmt.Errorf("syntax error: unterminated quoted string")
			}
		case c == '\\':
			if i+1 < len(line) {
				if line[i+1] != '\n' {
					word.WriteByte(line[i+1])
					inWord = true
				}
				i += 2
			} else {
				i++
			}
		case c == '$':
			v, j := expand(line, i)
			word.WriteString(v)
			inWord = true
			i = j
		case c == '#' && !inWord:
			i = len(line)
		case c == ';':
			if err := endCmd(";"); err != nil {
				return nil, err
			}
			i++
		case c == '&' && strings.HasPrefix(line[i:], "&&"):
			if err := endCmd("&&"); err != nil {
				return nil, err
			}
			i += 2
		case c == '|' && strings.HasPrefix(line[i:], "||"):
			if err := endCmd("||"); err != nil {
				return nil, err
			}
			i += 2
		case c == '>' && strings.HasPrefix(line[i:], ">/dev/null"):
			// The one redirection the fake honours: output thrown away.
			end()
			args = append(args, ">/dev/null")
			i += len(">/dev/null")
		case strings.IndexByte("|&<>()`", c) >= 0:
			return nil, fmt.Errorf("syntax error: '%c' is not run by this fake shell (unquoted in %q)", c, line)
		default:
			word.WriteByte(c)
			inWord = true
			i++
		}
	}
	if err := endCmd(""); err != nil {
		return nil, err
	}
	return cmds, nil
}
