package main

import (
	"flag"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/jail-sandbox/jail/jail"
	"github.com/jail-sandbox/jail/jail/client"
	"github.com/jail-sandbox/jail/jail/server"
)

const serveUsage = `Usage: jail serve [--socket PATH]

Serves jail's local API (HTTP/1.1 and JSON; docs/api.md) on a unix socket, by default jail.sock in
your runtime directory ($XDG_RUNTIME_DIR/jail, else /tmp/jail-UID), until killed. Only your own
processes outside any sandbox may connect. Each sandbox also answers the API on its own socket,
without this server.
`

func runServe(args []string, stdio jail.Stdio) int {
	fs := flag.NewFlagSet("jail serve", flag.ContinueOnError)
	socket := fs.String("socket", "", "")
	if status, done := parseOptionsOnly(fs, "serve", strings.TrimSpace(serveUsage), args, stdio); done {
		return status
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
