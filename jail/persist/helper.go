package persist

import (
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"time"

	"github.com/jail-sandbox/jail/jail"
	"github.com/jail-sandbox/jail/jail/client"
	"github.com/jail-sandbox/jail/jail/internal/fsop"
	"github.com/jail-sandbox/jail/jail/internal/rundir"
	"github.com/jail-sandbox/jail/jail/internal/spawn"
	"github.com/jail-sandbox/jail/jail/server"
	"github.com/jail-sandbox/jail/proxy"
)

// MaybeHelper runs the program jail's binary is when a persistent sandbox's keeper started it
// under a helper's name (argv[0]), and exits; otherwise it returns at once. Call it in main
// right after jail.MaybeInit.
func MaybeHelper() {
	if len(os.Args) < 2 {
		return
	}
	switch os.Args[0] {
	case spawn.EgressArg0, fsop.Arg0, spawn.APIArg0:
		// Its name for ps: it was executed from a descriptor or /proc/self/exe, which named it
		// after that. Best effort (inside a sandbox, /proc is read-only).
		os.WriteFile("/proc/self/comm", []byte(os.Args[0]), 0)
	}
	switch os.Args[0] {
	case spawn.EgressArg0:
		os.Exit(serveEgress(os.Args[1]))
	case fsop.Arg0:
		os.Exit(fsop.Main(os.Args[1:]))
	case spawn.APIArg0:
		srv := &server.Server{Client: &client.Client{Binary: self()}, Version: jail.Version(), Idle: HandlerIdle}
		os.Exit(srv.ServeHandler())
	}
}

// self is this program's path, which creates through the API run as `jail create`.
func self() string {
	p, _ := os.Executable()
	return p
}

// HandlerIdle is how long a keeper's handler waits for a connection's next request.
const HandlerIdle = 10 * time.Second

// serveEgress is a persistent sandbox's egress proxy, which its keeper runs on the socket bound
// into the sandbox (descriptor 3), with the policy create recorded beside it. Denials go to
// egress.log there. It ends when the keeper kills it, with the sandbox.
func serveEgress(dir string) int {
	var p proxy.Policy
	b, err := os.ReadFile(filepath.Join(dir, rundir.EgressPolicy))
	if err == nil {
		err = json.Unmarshal(b, &p)
	}
	if err != nil {
		return 125
	}
	log, err := os.OpenFile(filepath.Join(dir, "egress.log"), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return 125
	}
	srv, err := proxy.NewServer(p, proxy.Options{Log: log})
	if err != nil {
		return 125
	}
	l, err := net.FileListener(os.NewFile(3, "egress"))
	if err != nil {
		return 125
	}
	srv.Serve(l)
	return 0
}
