package setup

import (
	"fmt"
	"io"
	"os"

	"golang.org/x/sys/unix"

	"github.com/jail-sandbox/jail/jail/internal/fail"
	"github.com/jail-sandbox/jail/jail/internal/mount"
	"github.com/jail-sandbox/jail/jail/internal/restrict"
	"github.com/jail-sandbox/jail/jail/internal/spawn"
	"github.com/jail-sandbox/jail/jail/internal/verbose"
	"github.com/jail-sandbox/jail/jail/internal/wire"
	"github.com/jail-sandbox/jail/plan"
)

// Run reads the plan, builds the sandbox, starts the command and returns the setup's exit status. A
// failure is sent to the host over wire.ReportFd, which prints it as jail's one-line error.
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
	pre, err := prepare(ns) // prelude.go
	if err != nil {
		return sendReport(fail.New("sandbox init", "", err))
	}
	cfg, err := wire.ReadConfig(host)
	if err != nil {
		return sendReport(fail.New("read sandbox plan", "", err))
	}
	verbose.Started = cfg.Started
	hostLeft = cfg.HostLeaves
	pre.log(cfg.Spec)
	if !pre.fits(cfg.Spec) {
		return sendReport(&fail.Error{Op: "read sandbox plan", Detail: "the plan's namespaces are not init's", Exit: fail.ExitSetup})
	}
	status, err = sandboxInit(cfg, host, pre, p1)
	if err != nil {
		return sendReport(fail.New("setup", "", err))
	}
	return status
}

// initStep is one named step of the sandbox's setup.
type Step struct {
	Name string
	Run  func(*plan.Spec) error
}

// sandboxInit builds the sandbox in the new namespaces, in this order, on what the prelude did,
// then starts the command as p1's child and names it to p1, which forwards signals to it and
// reaps it. Each step is a function of its own; a failing one stops the run and its error, naming
// the step, goes back to the host. When setupStays, it waits for the command's end, finishes the
// run and returns the command's status; otherwise it returns 0 at once, which pid 1 ignores: it
// exits with the command's status.
func sandboxInit(cfg *wire.Config, host *os.File, pre *prelude, p1 *spawn.Pid1) (int, error) {
	err := runInitSteps(cfg.Spec, []Step{
		{"build the root filesystem", func(spec *plan.Spec) error { // Spec.Mounts, pivot_root, read-only
			return mount.SetupRoot(spec, pre.roots)
		}},
		{"serve the egress proxy ports", startEgressPorts}, // egress.go
		{"set hostname", setHostname},
		{"set resource limits", restrict.SetRlimits},
		{"close inherited descriptors", restrict.CloseInheritedFds},
		{"enter the working directory", enterCwd},
	})
	if err != nil {
		return 0, err
	}
	namespaces := pre.namespaces(cfg.Observe)
	tty, stdio := commandTerminal(cfg)
	if tty != nil {
		tty.FollowResizes() // pid 1 sends it SIGWINCH (JAIL_LINK_WINCH)
	}
	// Signals sent before the command exists stay pending in pid 1 until it is named; a host that
	// forwards signals itself must catch them before then too.
	if err := hostCatchesSignals(host); err != nil {
		return 0, fail.New("wait for the host", "", err)
	}
	pid, err := startPayload(cfg, stdio, tty != nil)
	if err != nil {
		return 0, err
	}
	if cfg.Observe {
		wire.Tell(wire.Message{Started: &wire.Started{PID: pid, Namespaces: namespaces}}) // messages.go
	}
	stays := setupStays(cfg)
	if err := p1.Name(pid, stays, tty != nil); err != nil {
		return 0, fail.New("name the command to pid 1", "", err)
	}
	if !stays {
		return 0, nil
	}
	if tty != nil {
		tty.Slave.Close() // the command holds it now
		tty.Start()
	}
	ws, err := p1.AwaitCommand()
	if err != nil {
		return 0, fail.New("wait for the command", "", err)
	}
	endRest(pid, pre.flags&unix.CLONE_NEWPID != 0)
	tty.Finish()
	if cfg.Observe {
		if ru, err := p1.Usage(); err == nil { // without it the host's own measure of init stands in
			wire.TellExited(ws, ru)
		}
	}
	return fail.ExitStatus(ws), nil
}

// runInitSteps runs steps in order, logging each when verbose. The first failure stops them and
// comes back as an *Error named after its step.
func runInitSteps(spec *plan.Spec, steps []Step) error {
	for _, step := range steps {
		verbose.Logf(spec, "init: %s", step.Name)
		if err := step.Run(spec); err != nil {
			return fail.New(step.Name, "", err)
		}
	}
	return nil
}

// hostCatchesSignals returns once the host catches the signals it forwards to the command: it
// closes the plan's pipe then (sendPlan). Before that such a signal would end jail instead of
// reaching the command, so the command must not exist yet.
func hostCatchesSignals(plan *os.File) error {
	defer plan.Close()
	_, err := io.Copy(io.Discard, plan)
	return err
}

// hostLeft says the host left the sandbox to jail's waiter once it sent the plan
// (wire.Config.HostLeaves).
var hostLeft bool

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

// enterCwd makes the Spec's working directory init's, which the command inherits.
func enterCwd(spec *plan.Spec) error {
	if err := os.Chdir(spec.Cwd); err != nil {
		return &fail.Error{Op: "chdir", Path: spec.Cwd, Errno: fail.Errno(err), Exit: fail.ExitSetup}
	}
	return nil
}
