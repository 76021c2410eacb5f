package spawn

/*
#include "spawn.h"
*/
import "C"

import (
	"encoding/binary"
	"errors"
	"os"
	"syscall"
)

// pid1 is init's setup's link to pid1.c: the sandbox's pid 1, this process's parent, which reaps
// the command (the setup starts it as pid 1's child) and forwards jail's signals to it.
type Pid1 struct {
	link, back *os.File
}

// TakePid1 returns the link to pid 1, which started this process as its setup.
func TakePid1() (*Pid1, error) {
	if C.jail_pid1_link_fd < 0 {
		return nil, errors.New("init did not start as pid 1 and its setup")
	}
	return &Pid1{
		link: os.NewFile(uintptr(C.jail_pid1_link_fd), "pid 1 link"),
		back: newPipeEnd(C.jail_pid1_back_fd, "pid 1 back"),
	}, nil
}

// name tells pid 1 the command's pid, which it forwards signals to from then on: stays says this
// process waits for the command's end (awaitCommand), terminal that it relays the command's
// pseudo-terminal and takes SIGWINCH.
func (p *Pid1) Name(command int, stays, terminal bool) error {
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
func (p *Pid1) send(pid, flags uint32) error {
	msg := binary.NativeEndian.AppendUint32(nil, pid)
	_, err := p.link.Write(binary.NativeEndian.AppendUint32(msg, flags))
	return err
}

// awaitCommand returns the command's wait status once pid 1 has reaped it.
func (p *Pid1) AwaitCommand() (syscall.WaitStatus, error) {
	ws, _, err := readWaited(p.back, "pid 1")
	return ws, err
}

// usage returns the resource usage of everything pid 1 has reaped.
func (p *Pid1) Usage() (syscall.Rusage, error) {
	if err := p.send(0, C.JAIL_LINK_USAGE); err != nil {
		return syscall.Rusage{}, err
	}
	_, ru, err := readWaited(p.back, "pid 1")
	return ru, err
}
