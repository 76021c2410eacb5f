package setup

import (
	"fmt"
	"io"
	"os"
	"time"

	"golang.org/x/sys/unix"

	"github.com/jail-sandbox/jail/jail/internal/fail"
	"github.com/jail-sandbox/jail/jail/internal/mount"
	"github.com/jail-sandbox/jail/jail/internal/spawn"
	"github.com/jail-sandbox/jail/jail/internal/verbose"
	"github.com/jail-sandbox/jail/jail/internal/wire"
	"github.com/jail-sandbox/jail/plan"
)

// Run reads the plan, builds the sandbox, starts the command and returns the setup's exit
// status. A failure is sent to the host over wire.ReportFd, which prints it as jail's one-line
// error.
func Run() (status int) {
	defer func() {
		// A bug in init still ends as jail's one-line error, not as a stack trace the host
		// would pass off as the command's exit status 2.
		if r := recover(); r != nil {
			status = sendReport(&fail.Error{Op: "sandbox init", Detail: fmt.Sprint("panic: ", r), Exit: fail.ExitSetup})
		}
	}()
	p1, err := spawn.TakePid1() // spawn/pid1.c
	if err != nil {
		return sendReport(fail.New("sandbox init", "", err))
	}
	host := os.NewFile(wire.ConfigFd, "config")
	ns, err := wire.ReceiveNamespaces(host)
	if err != nil {
		return sendReport(fail.New("read sandbox plan", "", err))
	}
	s, preErr := prepare(ns)
	cfg, files, err := wire.ReadConfig(host) // it comes even after a failed prelude
	report := sendReport
	if err == nil {
		// The host's word once it made the placeholders says whether it stays to print an
		// error, or leaves (and would drop one written to it meanwhile, unread).
		report = func(e *fail.Error) int {
			awaitMade(host) // unless the setup failed after it
			return sendReport(e)
		}
	}
	switch {
	case preErr != nil:
		return report(fail.New("sandbox init", "", preErr))
	case err != nil:
		return report(fail.New("read sandbox plan", "", err))
	}
	s.cfg, s.spec, s.files, s.log = cfg, cfg.Spec, files, verbose.New(cfg.Verbose, cfg.Started)
	s.logPrelude()
	if ns, _ := wire.CloneFlags(s.spec.Namespaces); ns != s.ns {
		return report(&fail.Error{Op: "read sandbox plan", Detail: "the plan's namespaces are not init's", Exit: fail.ExitSetup})
	}
	s.p1, s.host = p1, host
	status, err = s.run()
	if err != nil {
		return report(fail.New("setup", "", err))
	}
	return status
}

// setup is init's setup as it goes: what it did before the plan arrived, then the plan.
type setup struct {
	ns    uintptr      // the clone flags of init's namespaces
	nsDir int          // init's /proc/self/ns on the host's /proc, for the status record; -1: none
	roots *mount.Roots // the scratch root init entered, where the plan's root is built
	done  []doneStep   // the phases run before the plan, logged once the plan says whether to
	ready time.Time    // when init began to wait for its plan

	host  *os.File     // the plan's socket (wire.ConfigFd), until the host closes it
	cfg   *wire.Config // the plan and how to run it; nil until it arrives
	spec  *plan.Spec   // cfg.Spec
	files []*os.File   // the descriptors that came with the plan, until a phase takes them
	p1    *spawn.Pid1  // the link to pid 1
	log   verbose.Log
	exec  []string // files Landlock lets the command execute beyond its grants (spawner.go)
}

// prepare runs the phases before the plan for the namespaces ns.
func prepare(ns uintptr) (*setup, error) {
	if ns&unix.CLONE_NEWNS == 0 {
		return nil, &fail.Error{Op: "sandbox init", Detail: "started without a mount namespace", Exit: fail.ExitSetup}
	}
	s := &setup{ns: ns, nsDir: -1}
	if err := s.runPhases(beforePlan); err != nil {
		return nil, err
	}
	s.ready = time.Now()
	return s, nil
}

// run builds the sandbox from the plan, on what was done before it came, then starts the command
// as p1's child and names it to p1, which forwards signals to it and reaps it. When the setup
// stays (setupStays), it waits for the command's end, finishes the run and returns the command's
// status; otherwise it returns 0 at once, which pid 1 ignores: it exits with the command's status.
func (s *setup) run() (int, error) {
	p1 := s.p1
	if err := s.runPhases(afterPlan); err != nil {
		return 0, err
	}
	namespaces := s.namespaces()
	tty, stdio := s.commandTerminal()
	if tty != nil {
		tty.FollowResizes() // pid 1 sends it SIGWINCH (JAIL_LINK_WINCH)
	}
	var pid int
	var err error
	if s.cfg.Spawner {
		pid, err = s.startSpawner() // spawner.go
	} else {
		pid, err = s.startCommand(stdio, tty != nil)
	}
	if err != nil {
		return 0, err
	}
	if s.cfg.Observe || s.cfg.Spawner {
		wire.Tell(wire.Message{Started: &wire.Started{PID: pid, Namespaces: namespaces}})
	}
	stays := setupStays(s.cfg)
	link := spawn.Link{Stays: stays, Terminal: tty != nil, HostLeaves: hostLeft, Report: s.cfg.Observe}
	if err := p1.Name(pid, link); err != nil {
		return 0, fail.New("name the command to pid 1", "", err)
	}
	if !stays {
		return 0, nil
	}
	// The setup stays for the run: its threads' timer slack first, so that the threads the
	// runtime starts for the Ps it booted without (spawn/boot.c) inherit the caller's.
	if err := spawn.RestoreTimerSlack(); err != nil { // its timers are at worst 1 ms late
		s.log.Printf("restore the timer slack: %v", err)
	}
	spawn.RestoreProcs()
	if s.cfg.Spawner {
		leaveSpawnersChannel()
	}
	if tty != nil {
		tty.Slave.Close() // the command holds it now
		tty.Start()
	}
	ws, err := p1.AwaitCommand()
	if err != nil {
		return 0, fail.New("wait for the command", "", err)
	}
	endRest(pid, s.ns&unix.CLONE_NEWPID != 0)
	tty.Finish()
	if s.cfg.Verbose || s.cfg.Explain {
		s.tellLeftovers()
	}
	return fail.ExitStatus(ws), nil
}

// namespaces returns init's namespaces when the run is observed (reading them costs 0.1 ms),
// and lets go of the host's /proc: the descriptor must not outlive setup.
func (s *setup) namespaces() wire.NSInodes {
	var ns wire.NSInodes
	if s.cfg.Observe {
		ns = wire.ReadNSInodes(s.nsDir)
	}
	unix.Close(s.nsDir)
	s.nsDir = -1
	return ns
}

// hostCatchesSignals returns once the host catches the signals it forwards to the command, and
// its audit has walked what the run may write: it closes the plan's pipe then (letStart). Before
// that such a signal would end jail instead of reaching the command, and the command's writes
// would race the walk, so the command must not exist yet. Signals sent before the command exists
// stay pending in pid 1 until it is named.
func hostCatchesSignals(plan *os.File) error {
	defer plan.Close()
	err := awaitMade(plan) // a plan with no placeholders: the setup waited for nothing before
	if err == nil {
		_, err = io.Copy(io.Discard, plan)
	}
	return err
}

// awaitMade waits for the host's wire.Made, once: the placeholders the plan's protections sit
// on exist from then on (the host makes them after it sent the plan), and it says whether the
// host leaves (hostLeft). Later calls return nil.
func awaitMade(host *os.File) error {
	if madeRead {
		return nil
	}
	madeRead = true
	m, err := wire.ReceiveMade(host)
	hostLeft = m.HostLeaves
	return err
}

var (
	madeRead bool // awaitMade has read wire.Made, or failed to
	hostLeft bool // the host left the sandbox to jail's waiter once it made the placeholders (wire.Made.HostLeaves)
)

// sendReport sends e to the host, or prints it as the host would when the host has left (or is
// gone: a plan init could not read may have been its last word), and returns the status init
// exits with.
func sendReport(e *fail.Error) int {
	if e.Exit == 0 {
		e.Exit = fail.ExitSetup
	}
	if hostLeft || wire.Tell(wire.Message{Error: e}) != nil {
		e.AddUsernsHint()
		fmt.Fprintf(os.Stderr, "jail: %s\n", e)
	}
	return e.Exit
}

// enterCwd makes the plan's working directory init's, which the command inherits.
func (s *setup) enterCwd() error {
	if err := os.Chdir(s.spec.Cwd); err != nil {
		return &fail.Error{Op: "chdir", Path: s.spec.Cwd, Errno: fail.Errno(err), Exit: fail.ExitSetup}
	}
	return nil
}
