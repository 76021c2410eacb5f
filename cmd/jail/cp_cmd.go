package main

import (
	"flag"
	"fmt"
	"strings"

	"github.com/jail-sandbox/jail/jail"
	"github.com/jail-sandbox/jail/jail/client"
)

const cpUsage = `Usage: jail cp ID:PATH DEST|-
       jail cp SRC|- ID:PATH

Copies files out of a persistent sandbox, or into it. A directory is copied whole; into DEST
(or PATH) when that is a directory, else as it. - is a tar stream: written to stdout, or read
from stdin and extracted into PATH. The sandbox's side of the copy runs inside it, with every
restriction of a command; what comes out is extracted without following any symlink and never
outside DEST.
`

func runCp(args []string, stdio jail.Stdio) int {
	fs := flag.NewFlagSet("jail cp", flag.ContinueOnError)
	if status, done := parseSubcommand(fs, "cp", cpUsage, args, stdio); done {
		return status
	}
	if fs.NArg() != 2 {
		fmt.Fprint(stdio.Err, "jail: cp: give a source and a destination, one of them ID:PATH (see jail cp --help)\n")
		return exitFailure
	}
	src, dst := fs.Arg(0), fs.Arg(1)
	c := client.New()
	var err error
	switch sid, spath, fromSandbox := sandboxPath(src); {
	case fromSandbox && dst == "-":
		err = c.ArchiveOut(sid, spath, stdio.Out)
	case fromSandbox:
		err = c.CopyOut(sid, spath, dst)
	default:
		did, dpath, toSandbox := sandboxPath(dst)
		switch {
		case !toSandbox:
			fmt.Fprint(stdio.Err, "jail: cp: one side is a sandbox's: ID:PATH\n")
			return exitFailure
		case src == "-":
			_, err = c.ArchiveIn(did, dpath, "", stdio.In)
		default:
			err = c.CopyIn(did, src, dpath)
		}
	}
	if err != nil {
		return failAPI(stdio, err)
	}
	return 0
}

// sandboxPath splits ID:PATH; ok is false for a host path (no colon before the first slash).
func sandboxPath(s string) (id, path string, ok bool) {
	id, path, ok = strings.Cut(s, ":")
	if !ok || id == "" || strings.Contains(id, "/") {
		return "", "", false
	}
	if path == "" {
		path = "."
	}
	return id, path, true
}
