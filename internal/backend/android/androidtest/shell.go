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
	p := &shellParser{vars: vars}
	for i := 0; i < len(line); {
		var err error
		if i, err = p.step(line, i); err != nil {
			return nil, err
		}
	}
	if err := p.endCmd(""); err != nil {
		return nil, err
	}
	return p.cmds, nil
}

// shellParser is parseShell's state: the commands so far, the words of the
// command being read, and the word being read.
type shellParser struct {
	vars   map[string]string
	cmds   []shellCommand
	args   []string
	word   strings.Builder
	inWord bool // a word has begun (it may still be empty: '')
}

// end finishes the word being read, if any.
func (p *shellParser) end() {
	if p.inWord {
		p.args = append(p.args, p.word.String())
		p.word.Reset()
		p.inWord = false
	}
}

// endCmd finishes the command being read, joined to the next by op. An
// empty command is skipped at the end of the line or before ; (or a
// newline), and a syntax error before && or ||.
func (p *shellParser) endCmd(op string) error {
	p.end()
	if len(p.args) == 0 {
		if op == "" || op == ";" {
			return nil
		}
		return fmt.Errorf("syntax error: '%s' unexpected", op)
	}
	p.cmds = append(p.cmds, shellCommand{args: p.args, op: op})
	p.args = nil
	return nil
}

// expand expands the parameter at s[i] == '$' ($NAME, ${NAME} or a special
// parameter), returning its value and the index just after it; a '$'
// starting none of these stands for itself.
func (p *shellParser) expand(s string, i int) (string, int) {
	j := i + 1
	if j < len(s) && s[j] == '{' {
		k := strings.IndexByte(s[j:], '}')
		if k < 0 {
			return "$", i + 1
		}
		return p.vars[s[j+1:j+k]], j + k + 1
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
	return p.vars[s[i+1:j]], j
}

// step reads what starts at line[i] (a blank, a quoted string, an escaped
// character, an expansion, a comment, an operator or a plain character)
// and returns the index just after it.
func (p *shellParser) step(line string, i int) (int, error) {
	c := line[i]
	switch {
	case c == ' ' || c == '\t' || c == '\n':
		p.end()
		if c == '\n' {
			if err := p.endCmd(";"); err != nil {
				return 0, err
			}
		}
		return i + 1, nil
	case c == '\'':
		k := strings.IndexByte(line[i+1:], '\'')
		if k < 0 {
			return 0, fmt.Errorf("syntax error: unterminated quoted string")
		}
		p.word.WriteString(line[i+1 : i+1+k])
		p.inWord = true
		return i + k + 2, nil
	case c == '"':
		p.inWord = true
		return p.doubleQuoted(line, i+1)
	case c == '\\':
		if i+1 < len(line) {
			if line[i+1] != '\n' {
				p.word.WriteByte(line[i+1])
				p.inWord = true
			}
			return i + 2, nil
		}
		return i + 1, nil
	case c == '$':
		v, j := p.expand(line, i)
		p.word.WriteString(v)
		p.inWord = true
		return j, nil
	case c == '#' && !p.inWord:
		return len(line), nil
	case strings.IndexByte(";&|<>()`", c) >= 0:
		return p.operator(line, i)
	default:
		p.word.WriteByte(c)
		p.inWord = true
		return i + 1, nil
	}
}

// doubleQuoted reads a "..." string from line[i], just after its opening
// quote, into the word: \ escapes only $ ` " \ and a newline, and $
// expands; it returns the index just after the closing quote.
func (p *shellParser) doubleQuoted(line string, i int) (int, error) {
	for i < len(line) {
		d := line[i]
		if d == '"' {
			return i + 1, nil
		}
		if d == '\\' && i+1 < len(line) && strings.IndexByte("$`\"\\\n", line[i+1]) >= 0 {
			if line[i+1] != '\n' {
				p.word.WriteByte(line[i+1])
			}
			i += 2
			continue
		}
		if d == '$' {
			v, j := p.expand(line, i)
			p.word.WriteString(v)
			i = j
			continue
		}
		if d == '`' {
			return 0, fmt.Errorf("command substitution with ` is not run by this fake shell")
		}
		p.word.WriteByte(d)
		i++
	}
	return 0, fmt.Errorf("syntax error: unterminated quoted string")
}

// operator reads the operator at line[i], one of ; && || and >/dev/null
// (the one redirection the fake honours), and returns the index just after
// it; any other of | & < > ( ) ` is a syntax error.
func (p *shellParser) operator(line string, i int) (int, error) {
	c := line[i]
	switch {
	case c == ';':
		return i + 1, p.endCmd(";")
	case c == '&' && strings.HasPrefix(line[i:], "&&"):
		return i + 2, p.endCmd("&&")
	case c == '|' && strings.HasPrefix(line[i:], "||"):
		return i + 2, p.endCmd("||")
	case c == '>' && strings.HasPrefix(line[i:], ">/dev/null"):
		// The one redirection the fake honours: output thrown away.
		p.end()
		p.args = append(p.args, ">/dev/null")
		return i + len(">/dev/null"), nil
	}
	return 0, fmt.Errorf("syntax error: '%c' is not run by this fake shell (unquoted in %q)", c, line)
}
