package main

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/jail-sandbox/jail/jail"
	"github.com/jail-sandbox/jail/jail/client"
	"github.com/jail-sandbox/jail/jail/server"
)

const serveUsage = `Usage: jail serve [--socket PATH]
       jail serve --e2b ADDR [--e2b-template NAME=PROFILE]... [--e2b-dir DIR]

Serves jail's local API (HTTP/1.1 and JSON; docs/api.md) on a unix socket, by default jail.sock in
your runtime directory ($XDG_RUNTIME_DIR/jail, else /tmp/jail-UID), until killed. Only your own
processes outside any sandbox may connect. Each sandbox also answers the API on its own socket,
without this server.

With --e2b, serves E2B's API instead, on ADDR (loopback only: 127.0.0.1:PORT; port 0 picks one),
so that E2B's SDKs and every framework's E2B provider run their sandboxes on jail (docs/e2b.md).
It prints the environment a client needs (E2B_API_URL, E2B_SANDBOX_URL, E2B_API_KEY) and writes
it to DIR/env beside the API key (DIR: $XDG_STATE_HOME/jail/e2b, else ~/.local/state/jail/e2b).
  --e2b-template NAME=PROFILE  run E2B template NAME on jail profile PROFILE (repeatable; base
                               runs on agent; any other name runs on base's profile)
  --e2b-dir DIR                the endpoint's directory (API key, environment, sandboxes'
                               working directories)
The endpoint is the program jail-e2b, beside jail or on PATH.
`

func runServe(args []string, stdio jail.Stdio) int {
	fs := flag.NewFlagSet("jail serve", flag.ContinueOnError)
	socket := fs.String("socket", "", "")
	e2bAddr := fs.String("e2b", "", "")
	e2bDir := fs.String("e2b-dir", "", "")
	var templates stringList
	fs.Var(&templates, "e2b-template", "")
	if status, done := parseOptionsOnly(fs, "serve", strings.TrimSpace(serveUsage), args, stdio); done {
		return status
	}
	if *e2bAddr != "" {
		return serveE2B(*e2bAddr, *e2bDir, templates, stdio)
	}
	if *e2bDir != "" || len(templates) > 0 {
		return fail(stdio.Err, fmt.Errorf("serve: --e2b-dir and --e2b-template go with --e2b ADDR"))
	}
	path := *socket
	if path == "" {
		var err error
		if path, err = client.DaemonSocket(); err != nil {
			return failAPI(stdio, err)
		}
	}
	bin, _ := os.Executable() // creates run this very binary as jail create
	srv := &server.Server{Client: &client.Client{Binary: bin}, Version: jail.Version(), Idle: 5 * time.Minute}
	fmt.Fprintf(stdio.Err, "jail: serving the API on %s\n", path)
	if err := srv.Listen(path); err != nil {
		return fail(stdio.Err, fmt.Errorf("serve %s: %w", path, err))
	}
	return 0
}

// serveE2B replaces this process with jail-e2b, the E2B endpoint, which creates its sandboxes
// with this very binary. Profile files named relative to here are made absolute first.
func serveE2B(addr, dir string, templates []string, stdio jail.Stdio) int {
	self, err := os.Executable()
	if err != nil {
		return fail(stdio.Err, fmt.Errorf("serve --e2b: %w", err))
	}
	bin := filepath.Join(filepath.Dir(self), "jail-e2b")
	if _, err := os.Stat(bin); err != nil {
		if bin, err = exec.LookPath("jail-e2b"); err != nil {
			return fail(stdio.Err, fmt.Errorf("serve --e2b: the E2B endpoint is the program jail-e2b, which is neither beside %s nor on PATH (make bin/jail-e2b builds it)", self))
		}
	}
	argv := []string{bin, "--jail", self}
	if dir != "" {
		if dir, err = filepath.Abs(dir); err != nil {
			return fail(stdio.Err, fmt.Errorf("serve --e2b: %w", err))
		}
		argv = append(argv, "--dir", dir)
	}
	for _, t := range templates {
		if name, profile, ok := strings.Cut(t, "="); ok && strings.Contains(profile, "/") {
			abs, err := filepath.Abs(profile)
			if err != nil {
				return fail(stdio.Err, fmt.Errorf("serve --e2b: %w", err))
			}
			t = name + "=" + abs
		}
		argv = append(argv, "--template", t)
	}
	argv = append(argv, addr)
	err = syscall.Exec(bin, argv, os.Environ())
	return fail(stdio.Err, fmt.Errorf("serve --e2b: run %s: %w", bin, err))
}
