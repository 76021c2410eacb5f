package profiles

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Error is a problem in a profile, located at the line of the key that caused it (even after
// extends were merged and variables expanded). It prints as "FILE:LINE: KEY: msg"; parts that
// are unknown (e.g. a value that came from a command-line flag has no line) are left out.
type Error struct {
	File string
	Line int
	Key  string
	Err  error
}

func (e *Error) Error() string {
	s := ""
	if e.File != "" {
		s = e.File + ":"
		if e.Line > 0 {
			s += strconv.Itoa(e.Line) + ":"
		}
		s += " "
	}
	if e.Key != "" {
		s += e.Key + ": "
	}
	return s + e.Err.Error()
}

func (e *Error) Unwrap() error { return e.Err }

// errorAt builds an *Error for the value v of key in p, located where v was written.
func (p *Profile) errorAt(key, value string, format string, args ...any) *Error {
	o := p.origin(key, value)
	return &Error{File: o.File, Line: o.Line, Key: key, Err: fmt.Errorf(format, args...)}
}

// ErrorList is every problem found in a profile at once, ordered by file and line: `jail profile
// check` shows them all in one run rather than one per round. It prints one problem per line.
type ErrorList []*Error

func (l ErrorList) Error() string {
	lines := make([]string, len(l))
	for i, e := range l {
		lines[i] = e.Error()
	}
	return strings.Join(lines, "\n")
}

func (l ErrorList) Unwrap() []error {
	errs := make([]error, len(l))
	for i, e := range l {
		errs[i] = e
	}
	return errs
}

// add appends the problems err holds: an ErrorList's, an *Error, or any other error unlocated.
func (l *ErrorList) add(err error) {
	switch err := err.(type) {
	case nil:
	case ErrorList:
		*l = append(*l, err...)
	case *Error:
		*l = append(*l, err)
	default:
		*l = append(*l, &Error{Err: err})
	}
}

// err returns nil for no problem, the *Error itself for one, else the list ordered by file and
// line (stable: problems on one line keep the order they were found in).
func (l ErrorList) err() error {
	switch len(l) {
	case 0:
		return nil
	case 1:
		return l[0]
	}
	slices.SortStableFunc(l, func(a, b *Error) int {
		return cmp.Or(strings.Compare(a.File, b.File), a.Line-b.Line)
	})
	return l
}
