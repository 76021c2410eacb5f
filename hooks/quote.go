package hooks

import (
	"errors"
	"strings"
)

// ErrNUL is returned for text holding a NUL byte: no argv string or shell word can carry one, so
// such text cannot reach a shell intact and is refused rather than silently truncated.
var ErrNUL = errors.New("text contains a NUL byte")

// Quote returns s as one POSIX shell word that every sh-family shell (sh, dash, bash, zsh) reads
// back as exactly s. Words made only of characters no shell treats specially are returned as they
// are, for readability; everything else is wrapped in single quotes, inside which nothing is
// special, with each embedded ' written as '\” (close, escaped quote, reopen). Newlines, $, `,
// \, ", !, unicode and invalid UTF-8 all pass through single quotes untouched.
func Quote(s string) (string, error) {
	if strings.IndexByte(s, 0) >= 0 {
		return "", ErrNUL
	}
	if s != "" && strings.Trim(s, plainChars) == "" {
		return s, nil
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'", nil
}

// plainChars never need quoting in any sh-family shell, in any position of a word: Python's
// shlex.quote set without '=', which could make a first word an assignment and starts zsh's
// =command expansion.
const plainChars = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789@%+:,./_-"
