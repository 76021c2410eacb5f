// Package quote makes strings that a sandboxed command chose safe to print on the caller's
// terminal: a path it wrote, a host name it asked the egress proxy for.
package quote

import (
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Word returns s safe to print on a terminal and to paste as one shell word: as it is when made
// of plain characters, else Go-quoted, so that no control character (a terminal escape, a
// newline faking a line of jail's) reaches the terminal raw.
func Word(s string) string {
	for _, r := range s {
		if !unicode.IsPrint(r) || r == utf8.RuneError || strings.ContainsRune(" \"'`$!*?[]{}()<>|&;#~", r) {
			return strconv.Quote(s)
		}
	}
	return s
}
