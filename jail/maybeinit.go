package jail

import (
	"os"

	"github.com/jail-sandbox/jail/jail/internal/audit"
	"github.com/jail-sandbox/jail/jail/internal/setup"
	"github.com/jail-sandbox/jail/jail/internal/spawn"
)

// MaybeInit runs the setup of the sandbox's init when this process is one, and never returns then;
// otherwise it returns at once. An init (the host started /proc/self/exe with spawn.InitArg0, or
// the child spawn_early.c forked) forks before Go's runtime starts: it stays as the sandbox's pid
// 1, in C, and its child goes on here as the setup (pid1.c). Call it first in main, and in TestMain
// of tests that run sandboxes, before anything else can start threads or touch state.
func MaybeInit() {
	switch {
	case spawn.IsEarlyInit():
		os.Clearenv() // as an executed init's: the command's environment travels in the plan
	case len(os.Args) > 0 && os.Args[0] == spawn.AuditArg0:
		os.Exit(audit.Main(os.Args)) // jail's waiter, listing what the run wrote unseen
	case len(os.Args) == 0 || os.Args[0] != spawn.InitArg0:
		return
	}
	os.Exit(setup.Run())
}
