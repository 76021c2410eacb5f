package profiles

import (
	"fmt"
	"strconv"
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
