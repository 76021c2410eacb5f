package jail

import (
	"errors"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// reaper is init's pid-1 duty: it forwards signals to the command, reaps every process that ends
// in the sandbox, and when the command ends kills and reaps the rest. Having waited for all of
// them is what makes their CPU time and peak memory reach jail's caller (time jail -- CMD).
type reaper struct {
	signals *subscription
	tty     *ptyRelay // the command's pseudo-terminal, resized on SIGWINCH; nil without one
}

// newReaper starts catching the forwarded signals and SIGCHLD, in the background: wait for
// r.signals before the command starts. As pid 1, init gets a signal from outside its namespace
// only when it has a handler for it.
func newReaper() *reaper {
	return &reaper{signals: subscribeReaper()}
}

// wait forwards signals to the command until it exits, then kills every other process in the
// sandbox, reaps them all, and returns the command's wait status. Children are reaped as
// SIGCHLD says they end, never in a blocking wait4 while the command runs: a goroutine blocked
// in a syscall keeps the runtime's monitor thread awake (process.awaitExit). The signals stay
// caught to the end: init exits next, and stopping them would cost the runtime's round trips.
func (r *reaper) wait(command int) syscall.WaitStatus {
	for {
		if status, exited, children := reapEnded(command); exited {
			// As pid 1, init is the parent of every orphan: with no child left, the sandbox is
			// empty. Otherwise the command's own children may live on elsewhere.
			if children || os.Getpid() != 1 {
				killRest(command)
				reapAll()
			}
			return status
		}
		select {
		case <-r.signals.ended:
		case sig := <-r.signals.C:
			if sig == syscall.SIGWINCH && r.tty != nil {
				r.tty.resize() // the kernel signals the terminal's foreground process group
				continue
			}
			// Not reaped yet, so the pid is still the command's, even if it just exited.
			unix.Kill(command, sig.(syscall.Signal))
		}
	}
}

// reapEnded reaps every child that has ended, without waiting, and returns the command's status
// if it was one of them, and whether children are left. Orphans in the sandbox are reparented
// to init, so they are children too.
func reapEnded(command int) (status syscall.WaitStatus, exited, children bool) {
	for {
		var ws unix.WaitStatus
		pid, err := unix.Wait4(-1, &ws, unix.WNOHANG, nil)
		switch {
		case errors.Is(err, unix.EINTR):
		case err != nil: // ECHILD
			return status, exited, false
		case pid == 0: // none has ended
			return status, exited, true
		case pid == command:
			status, exited = syscall.WaitStatus(ws), true
		}
	}
}

// reapAll waits for every child until none is left.
func reapAll() {
	for {
		if _, err := unix.Wait4(-1, nil, 0, nil); err != nil && !errors.Is(err, unix.EINTR) {
			return // ECHILD: all gone
		}
	}
}

// killRest kills what the command left behind. As pid 1 of the sandbox's pid namespace, kill(-1)
// reaches every process in it but init; without a pid namespace that would be every process of
// the user on the host, so then only the command's own process group is killed.
func killRest(command int) {
	if os.Getpid() == 1 {
		unix.Kill(-1, unix.SIGKILL)
		return
	}
	unix.Kill(-command, unix.SIGKILL)
}
