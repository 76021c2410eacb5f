package setup

import (
	"errors"
	"fmt"
	"time"

	"golang.org/x/sys/unix"

	"github.com/jail-sandbox/jail/jail/internal/explain"
	"github.com/jail-sandbox/jail/jail/internal/fail"
	"github.com/jail-sandbox/jail/jail/internal/mount"
	"github.com/jail-sandbox/jail/jail/internal/restrict"
	"github.com/jail-sandbox/jail/jail/internal/spawn"
	"github.com/jail-sandbox/jail/jail/internal/wire"
)

// phases is every phase of the sandbox's setup, in the order init runs them: one table, as
// bubblewrap's setup_newroot runs its SetupOp list. Each phase runs at one of three points:
//
//   - beforePlan: as soon as init exists, what the namespaces it was started in call for whatever
//     the plan says. The host is still resolving the plan then (its Go runtime starts when init's
//     does), so these are off the sandbox's way. They decide nothing: whoever started init sends
//     the namespaces first on wire.ConfigFd, and the plan must ask for exactly those.
//   - afterPlan: the plan's root filesystem and the process state the command inherits.
//   - onThread: on one locked thread, the restrictions, each per thread and inherited by a fork;
//     the thread then starts the command (startCommand), which gets them all, while the setup's
//     other threads (relaying a terminal, the egress ports, --explain's listener) get none.
//
// A phase whose when says so is left out of this run, and out of -v's lines: they show exactly
// the steps taken. The first failure stops the setup, and its
// error, named after the phase, goes to the host.
var phases = []phase{
	{beforePlan, "make init non-dumpable", nil, func(*setup) error { return restrict.SetNonDumpable() }},
	{beforePlan, "open /proc/self/ns", nil, (*setup).openNamespaces}, // before the host's /proc is left behind
	{beforePlan, "enter a scratch root", nil, (*setup).enterScratchRoot},
	{beforePlan, "bring up loopback", (*setup).ownNetwork, func(*setup) error { return bringUpLoopback() }},
	{beforePlan, "make the /proc and /dev mounts", (*setup).planPending, func(s *setup) error { s.roots.Prepare(); return nil }}, // mount/ready.go

	{afterPlan, "build the root filesystem", nil, (*setup).buildRoot}, // Spec.Mounts, pivot_root, read-only
	{afterPlan, "serve the egress proxy ports", (*setup).proxied, (*setup).serveEgressPorts},
	{afterPlan, "set hostname", nil, (*setup).setHostname},
	{afterPlan, "set resource limits", nil, func(s *setup) error { return restrict.SetRlimits(s.spec.Limits, s.log) }},
	{afterPlan, "close inherited descriptors", nil, func(*setup) error { return restrict.CloseInheritedFds() }},
	{afterPlan, "enter the working directory", nil, (*setup).enterCwd},

	{onThread, spawn.StepSchedOther, (*setup).batched, func(*setup) error { return spawn.RestoreSchedOther() }},
	{onThread, spawn.StepTimerSlack, (*setup).coarseSlack, func(*setup) error { return spawn.RestoreThreadTimerSlack() }},
	{onThread, "drop capabilities", nil, (*setup).dropCapabilities},
	{onThread, "set no_new_privs", nil, func(*setup) error { return restrict.SetNoNewPrivs() }},
	{onThread, "apply landlock", nil, (*setup).applyLandlock},
	{onThread, "watch for --explain", (*setup).explaining, (*setup).watchForExplain}, // before seccomp, which may refuse seccomp(2)
	{onThread, "install seccomp filter", nil, func(s *setup) error { return restrict.InstallSeccomp(s.cfg.BPF, s.log) }},
}

// stage is when a phase runs: see phases.
type stage int

const (
	beforePlan stage = iota
	afterPlan
	onThread
)

// phase is one named step of the sandbox's setup.
type phase struct {
	stage stage
	name  string
	when  func(*setup) bool // nil: every run
	run   func(*setup) error
}

// runPhases runs the phases of stage st in order, logging each; those before the plan are noted
// with the time they began, and logged once the plan says whether to (logPrelude).
func (s *setup) runPhases(st stage) error {
	for _, p := range phases {
		if p.stage != st || p.when != nil && !p.when(s) {
			continue
		}
		var began time.Time
		if st == beforePlan {
			began = time.Now()
		} else {
			s.log.Printf("init: %s", p.name)
		}
		if err := p.run(s); err != nil {
			return fail.New(p.name, "", err)
		}
		if st == beforePlan {
			s.done = append(s.done, doneStep{p.name, began})
		}
	}
	return nil
}

// doneStep is a phase that ran before the plan arrived, and when it began.
type doneStep struct {
	what  string
	began time.Time
}

// logPrelude logs the phases that ran before the plan, once the plan says whether to.
func (s *setup) logPrelude() {
	for _, d := range s.done {
		s.log.At(d.began, "init: %s (before the plan arrived)", d.what)
	}
	s.log.At(s.ready, "init: wait for the plan")
}

func (s *setup) openNamespaces() (err error) {
	s.nsDir, err = unix.Open("/proc/self/ns", unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	return err
}

func (s *setup) enterScratchRoot() (err error) {
	s.roots, err = mount.OpenRoots()
	return err
}

// planPending says the plan has not come yet: work that the plan's ops would otherwise do is
// worth doing now only while init waits for it, not once it waits for init.
func (s *setup) planPending() bool {
	fds := []unix.PollFd{{Fd: wire.ConfigFd, Events: unix.POLLIN}}
	n, err := unix.Poll(fds, 0)
	return err == nil && n == 0
}

// ownNetwork says init has a network namespace of its own, whose lo starts down.
func (s *setup) ownNetwork() bool { return s.ns&unix.CLONE_NEWNET != 0 }

// buildRoot builds the root, and names to pid 1 the mounts made inside writable binds, which it
// watches (mount/watch.go); it says so when /proc had to be the container's.
func (s *setup) buildRoot() error {
	s.roots.WatchErr(s.p1.CanWatch())
	made := func() error {
		s.log.Printf("init: wait for the host's placeholders")
		if err := awaitMade(s.host); err != nil {
			return fail.New("wait for the host's placeholders", "", err)
		}
		return nil
	}
	if err := mount.SetupRoot(s.spec, s.roots, s.log, made); err != nil {
		return err
	}
	if err := s.p1.Watch(s.roots.Watched); err != nil {
		return fmt.Errorf("name the protections' mountpoints to pid 1: %w", err)
	}
	if s.roots.ContainerProc {
		s.notice(true, "/proc is the container's, masks kept (allowed by --allow-weaker; the kernel refuses a new one "+
			"under the container's masks): it lists the container's processes and their command lines, with the container's pids")
	}
	return nil
}

// dropCapabilities drops every capability the namespace gave init, the bounding set included:
// init holds CAP_SETPCAP there, so a bounding set left in place is jail's bug, and fails the run.
func (s *setup) dropCapabilities() error {
	kept, err := restrict.DropCapabilities()
	if err == nil && kept {
		err = errors.New("the bounding set could not be emptied")
	}
	return err
}

// batched says jail's threads run as SCHED_BATCH (spawn/batch.c): the command gets SCHED_OTHER
// back, as jail's caller had it.
func (s *setup) batched() bool { return s.cfg.SchedOther }

// coarseSlack says the setup's threads run with a coarse timer slack (spawn/slack.c).
func (s *setup) coarseSlack() bool { return spawn.CoarseSlack() }

// proxied says the plan has an egress proxy (network mode "proxy").
func (s *setup) proxied() bool { return s.spec.Network.Proxy != nil }

// explaining says the run asks for --explain.
func (s *setup) explaining() bool { return s.cfg.Explain }

// watchForExplain starts --explain's listener.
func (s *setup) watchForExplain() error { return explain.Start(s.spec, tellDenial) }
