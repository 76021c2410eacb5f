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

// newReaper starts catching the forwarded signals, in the background: wait for r.signals before
// the command starts. As pid 1, init gets a signal from outside its namespace only when it has a
// handler for it.
func newReaper() *reaper {
	return &reaper{signals: subscribe()}
}

// wait forwards signals to the command until it exits, then kills every other process in the
// sandbox, reaps them all, and returns the command's wait status.
func (r *reaper) wait(command int) syscall.WaitStatus {
	exited := make(chan syscall.WaitStatus, 1)
	reaped := make(chan struct{})
	go reapAll(command, exited, reaped)
	for {
		select {
		case sig := <-r.signals.C:
			if sig == syscall.SIGWINCH && r.tty != nil {
				r.tty.resize() // the kernel signals the terminal's foreground process group
				continue
			}
			unix.Kill(command, sig.(syscall.Signal)) // ESRCH: it just exited, exited is next
		case status := <-exited:
			r.signals.stop()
			killRest(command)
			<-reaped
			return status
		}
	}
}

// reapAll waits for every child until none is left, reporting the command's status on exited
// once it ends. Orphans in the sandbox are reparented to init, so they are children too.
func reapAll(command int, exited chan<- syscall.WaitStatus, reaped chan<- struct{}) {
	defer close(reaped)
	for {
		var ws unix.WaitStatus
		pid, err := unix.Wait4(-1, &ws, 0, nil)
		switch {
		case errors.Is(err, unix.EINTR):
		case err != nil: // ECHILD: all gone
			return
		case pid == command:
			exited <- syscall.WaitStatus(ws)
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
