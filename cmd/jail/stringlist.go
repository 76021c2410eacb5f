package main

import (
	"path/filepath"
	"strings"
)

// stringList is a repeatable flag: every use appends one value.
type stringList []string

func (l *stringList) String() string { return strings.Join(*l, ",") }

func (l *stringList) Set(v string) error {
	*l = append(*l, v)
	return nil
}

// pathList is a repeatable path flag. A relative path is taken from the current directory, as a
// user typing `--ro ../lib` means; paths starting with ~ or $ are left for the profile's
// variables.
type pathList []string

func (l *pathList) String() string { return strings.Join(*l, ",") }

func (l *pathList) Set(v string) error {
	if !filepath.IsAbs(v) && !strings.HasPrefix(v, "~") && !strings.HasPrefix(v, "$") {
		abs, err := filepath.Abs(v)
		if err != nil {
			return err
		}
		v = abs
	}
	*l = append(*l, v)
	return nil
}
