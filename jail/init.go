package jail

import (
	"fmt"
	"io"
	"os"

	"golang.org/x/sys/unix"

	"github.com/jail-sandbox/jail/plan"
)

// runInit reads the plan, builds the sandbox, starts the command and returns the setup's exit
// status. A failure is sent to the host over reportFd, which prints it as jail's one-line error.
func runInit() (status int) {
	defer func() {
		// A bug in init still ends as jail's one-line error, not as a stack trace the host
		// would pass off as the command's exit status 2.
		if r := recover(); r != nil {
			status = sendReport(&Error{Op: "sandbox init", Detail: fmt.Sprint("panic: ", r), Exit: ExitSetup})
		}
	}()
	p1, err := takePid1() // pid1.c
	if err != nil {
		return sendReport(newError("sandbox init", "", err))
	}
	host := os.NewFile(configFd, "config")
	ns, err := receiveNamespaces(host)
	if err != nil {
		return sendReport(newError("read sandbox plan", "", err))
	}
	pre, err := prepare(ns) // prelude.go
	if err != nil {
		return sendReport(newError("sandbox init", "", err))
	}
	cfg, err := readConfig(host)
	if err != nil {
		return sendReport(newError("read sandbox plan", "", err))
	}
	started = cfg.Started
	hostLeft = cfg.HostLeaves
	pre.log(cfg.Spec)
	if !pre.fits(cfg.Spec) {
		return sendReport(&Error{Op: "read sandbox plan", Detail: "the plan's namespaces are not init's", Exit: ExitSetup})
	}
	status, err = sandboxInit(cfg, host, pre, p1)
	if err != nil {
		return sendReport(newError("setup", "", err))
	}
	return status
}

// initStep is one named step of the sandbox's setup.
type initStep struct {
	name string
	run  func(*plan.Spec) error
}

// sandboxInit builds the sandbox in the new namespaces, in this order, on what the prelude did,
// then starts the command as p1's child and names it to p1, which forwards signals to it and
// reaps it. Each step is a function of its own; a failing one stops the run and its error, naming
// the step, goes back to the host. When setupStays, it waits for the command's end, finishes the
// run and returns the command's status; otherwise it returns 0 at once, which pid 1 ignores: it
// exits with the command's status.
func sandboxInit(cfg *initConfig, host *os.File, pre *prelude, p1 *pid1) (int, error) {
	err := runInitSteps(cfg.Spec, []initStep{
		{"build the root filesystem", func(spec *plan.Spec) error { // mount*.go: Spec.Mounts, pivot_root, read-only
			return setupRoot(spec, pre.roots)
		}},
		{"serve the egress proxy ports", startEgressPorts}, // egress.go
		{"set hostname", setHostname},
		{"set resource limits", setRlimits},
		{"close inherited descriptors", closeInheritedFds},
		{"enter the working directory", enterCwd},
	})
	if err != nil {
		return 0, err
	}
	namespaces := pre.namespaces(cfg.Observe)
	tty, stdio := commandTerminal(cfg)
	if tty != nil {
		tty.followResizes() // pid 1 sends it SIGWINCH (JAIL_LINK_WINCH)
	}
	// Signals sent before the command exists stay pending in pid 1 until it is named; a host that
	// forwards signals itself must catch them before then too.
	if err := hostCatchesSignals(host); err != nil {
		return 0, newError("wait for the host", "", err)
	}
	pid, err := startPayload(cfg, stdio, tty != nil)
	if err != nil {
		return 0, err
	}
	if cfg.Observe {
		tellHost(initMessage{Started: &startedMessage{PID: pid, Namespaces: namespaces}}) // initmsg.go
	}
	stays := setupStays(cfg)
	if err := p1.name(pid, stays, tty != nil); err != nil {
		return 0, newError("name the command to pid 1", "", err)
	}
	if !stays {
		return 0, nil
	}
	if tty != nil {
		tty.slave.Close() // the command holds it now
		tty.start()
	}
	ws, err := p1.awaitCommand()
	if err != nil {
		return 0, newError("wait for the command", "", err)
	}
	endRest(pid, pre.flags&unix.CLONE_NEWPID != 0)
	tty.finish()
	if cfg.Observe {
		if ru, err := p1.usage(); err == nil { // without it the host's own measure of init stands in
			tellHostExited(ws, ru)
		}
	}
	return exitStatus(ws), nil
}

// runInitSteps runs steps in order, logging each when verbose. The first failure stops them and
// comes back as an *Error named after its step.
func runInitSteps(spec *plan.Spec, steps []initStep) error {
	for _, step := range steps {
		logf(spec, "init: %s", step.name)
		if err := step.run(spec); err != nil {
			return newError(step.name, "", err)
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
// (initConfig.HostLeaves).
var hostLeft bool

// sendReport sends e to the host, or prints it as the host would when the host has left (or is
// gone: a plan init could not read may have been its last word), and returns the status init
// exits with.
func sendReport(e *Error) int {
	if e.Exit == 0 {
		e.Exit = ExitSetup
	}
	if hostLeft || tellHost(initMessage{Error: e}) != nil {
		e.addUsernsHint()
		fmt.Fprintf(os.Stderr, "jail: %s\n", e)
	}
	return e.Exit
}

// enterCwd makes the Spec's working directory init's, which the command inherits.
func enterCwd(spec *plan.Spec) error {
	if err := os.Chdir(spec.Cwd); err != nil {
		return &Error{Op: "chdir", Path: spec.Cwd, Errno: errnoOf(err), Exit: ExitSetup}
	}
	return nil
}
