package setup

import (
	"time"

	"golang.org/x/sys/unix"

	"github.com/jail-sandbox/jail/jail/internal/wire"
)

// setupStays says init's setup has work while the command runs, and so waits for its end: a
// terminal to relay, a persistent sandbox's egress ports (a run's host accepts on them itself),
// --explain's listener, and with --explain or -v the files that go with the sandbox to list at
// the end (leftovers.go). Otherwise it exits once it has named the command, and pid 1 alone sees
// the run to its end (and reports it, for --report).
func setupStays(cfg *wire.Config) bool {
	p := cfg.Spec.Network.Proxy
	return cfg.Terminal || p != nil && p.Socket != "" || cfg.Explain || cfg.Verbose
}

// endRest kills what the command left behind, from a setup that stayed for its end, and waits
// until pid 1 has reaped it all, so that its usage counts. In the sandbox's pid namespace,
// kill(-1) reaches every process but pid 1 and this one, and finds none once all are reaped;
// without one that would be every process of the user on the host, so then only the command's
// process group is killed (and its processes are not pid 1's to reap).
func endRest(command int, pidNamespace bool) {
	if !pidNamespace {
		unix.Kill(-command, unix.SIGKILL)
		return
	}
	unix.Kill(-1, unix.SIGKILL)
	for unix.Kill(-1, 0) == nil {
		time.Sleep(100 * time.Microsecond)
	}
}
