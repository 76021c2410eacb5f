package jail

/*
#include "spawn.h"
*/
import "C"

import (
	"encoding/binary"
	"errors"
	"os"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// pid1 is init's setup's link to pid1.c: the sandbox's pid 1, this process's parent, which reaps
// the command (the setup starts it as pid 1's child) and forwards jail's signals to it.
type pid1 struct {
	link, back *os.File
}

// takePid1 returns the link to pid 1, which started this process as its setup.
func takePid1() (*pid1, error) {
	if C.jail_pid1_link_fd < 0 {
		return nil, errors.New("init did not start as pid 1 and its setup")
	}
	return &pid1{
		link: os.NewFile(uintptr(C.jail_pid1_link_fd), "pid 1 link"),
		back: newPipeEnd(C.jail_pid1_back_fd, "pid 1 back"),
	}, nil
}

// name tells pid 1 the command's pid, which it forwards signals to from then on: stays says this
// process waits for the command's end (awaitCommand), terminal that it relays the command's
// pseudo-terminal and takes SIGWINCH.
func (p *pid1) name(command int, stays, terminal bool) error {
	var flags uint32
	if stays {
		flags |= C.JAIL_LINK_STAYS
	}
	if terminal {
		flags |= C.JAIL_LINK_WINCH
	}
	return p.send(uint32(command), flags)
}

// send writes a struct jail_link, in one write.
func (p *pid1) send(pid, flags uint32) error {
	msg := binary.NativeEndian.AppendUint32(nil, pid)
	_, err := p.link.Write(binary.NativeEndian.AppendUint32(msg, flags))
	return err
}

// awaitCommand returns the command's wait status once pid 1 has reaped it.
func (p *pid1) awaitCommand() (syscall.WaitStatus, error) {
	ws, _, err := readWaited(p.back, "pid 1")
	return ws, err
}

// usage returns the resource usage of everything pid 1 has reaped.
func (p *pid1) usage() (syscall.Rusage, error) {
	if err := p.send(0, C.JAIL_LINK_USAGE); err != nil {
		return syscall.Rusage{}, err
	}
	_, ru, err := readWaited(p.back, "pid 1")
	return ru, err
}

// setupStays says init's setup has work while the command runs, and so waits for its end: a
// terminal to relay, a run to report, the egress proxy's ports, --explain's listener. Otherwise
// it exits once it has named the command, and pid 1 alone sees the run to its end.
func setupStays(cfg *initConfig) bool {
	return cfg.Terminal || cfg.Observe || cfg.Spec.Network.Proxy != nil || cfg.Spec.Explain
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
