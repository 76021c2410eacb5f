package setup

import (
	"time"

	"golang.org/x/sys/unix"

	"github.com/jail-sandbox/jail/jail/internal/fail"
	"github.com/jail-sandbox/jail/jail/internal/mount"
	"github.com/jail-sandbox/jail/jail/internal/restrict"
	"github.com/jail-sandbox/jail/jail/internal/verbose"
	"github.com/jail-sandbox/jail/jail/internal/wire"
	"github.com/jail-sandbox/jail/plan"
)

// Before its plan arrives, init does what the namespaces it was started in call for whatever the
// plan says. The host is still resolving the plan then (its Go runtime starts when init's does),
// so these steps are off the sandbox's way. They decide nothing: whoever started init sends the
// namespaces first on wire.ConfigFd, and the plan must ask for exactly those.

// prelude is the setup init did before its plan arrived.
type prelude struct {
	flags uintptr      // the clone flags of init's namespaces
	nsDir int          // init's /proc/self/ns on the host's /proc, for the status record; -1: none
	roots *mount.Roots // the scratch root init entered, where the plan's root is built (mount/pivot.go)
	done  []doneStep   // the steps done, logged once the plan says whether to
	ready time.Time    // when the steps were done and init began to wait for its plan
}

// doneStep is a prelude step that ran, and when it began.
type doneStep struct {
	what  string
	began time.Time
}

// prepare runs the prelude's steps for the namespaces ns, in order. The first failure stops them
// and comes back as an *Error named after its step.
func prepare(ns uintptr) (*prelude, error) {
	if ns&unix.CLONE_NEWNS == 0 {
		return nil, &fail.Error{Op: "sandbox init", Detail: "started without a mount namespace", Exit: fail.ExitSetup}
	}
	p := &prelude{flags: ns, nsDir: -1}
	steps := []mount.Step{
		{What: "make init non-dumpable", Do: func() error { return restrict.SetNonDumpable(nil) }},
		{What: "open /proc/self/ns", Do: func() (err error) { // before the host's /proc is left behind
			p.nsDir, err = unix.Open("/proc/self/ns", unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
			return err
		}},
		{What: "enter a scratch root", Do: func() (err error) { p.roots, err = mount.OpenRoots(); return err }},
	}
	if ns&unix.CLONE_NEWNET != 0 {
		steps = append(steps, mount.Step{What: "bring up loopback", Do: bringUpLoopback})
	}
	for _, s := range steps {
		began := time.Now()
		if err := s.Do(); err != nil {
			return nil, fail.New(s.What, "", err)
		}
		p.done = append(p.done, doneStep{s.What, began})
	}
	p.ready = time.Now()
	return p, nil
}

// namespaces returns init's namespaces when the run is observed (reading them costs 0.1 ms),
// and lets go of the host's /proc: the descriptor must not outlive setup.
func (p *prelude) namespaces(observed bool) wire.NSInodes {
	var ns wire.NSInodes
	if observed {
		ns = wire.ReadNSInodes(p.nsDir)
	}
	mount.CloseFd(p.nsDir)
	p.nsDir = -1
	return ns
}

// fits reports whether spec asks for the namespaces the prelude prepared.
func (p *prelude) fits(spec *plan.Spec) bool {
	ns, _ := wire.CloneFlags(spec.Namespaces)
	return ns == p.flags
}

// log logs the prelude's steps, once the plan says whether to.
func (p *prelude) log(spec *plan.Spec) {
	for _, s := range p.done {
		verbose.LogAt(spec, s.began, "init: %s (before the plan arrived)", s.what)
	}
	verbose.LogAt(spec, p.ready, "init: wait for the plan")
}
