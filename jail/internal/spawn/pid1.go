package spawn

/*
#include <limits.h>
#include "spawn.h"
*/
import "C"

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"syscall"
)

// pid1 is init's setup's link to pid1.c: the sandbox's pid 1, this process's parent, which reaps
// the command (the setup starts it as pid 1's child) and forwards jail's signals to it.
type Pid1 struct {
	link, back *os.File
}

// CanWatch says whether pid 1 can watch the protections' mountpoints (watch.h), and why not.
func (p *Pid1) CanWatch() error {
	if e := C.jail_pid1_watch_errno; e != 0 {
		return fmt.Errorf("open /proc/self/mounts: %w", syscall.Errno(e))
	}
	return nil
}

// Watched is a mountpoint for pid 1 to watch: the mount the setup made there, and its path.
type Watched struct {
	MntID uint32
	Path  string
}

// Watch names to pid 1 the mountpoints ws: when a path no longer leads to its mount (the host
// removed it or renamed another file over it), pid 1 stops the sandbox. The names go in as few
// writes as fit, each below PIPE_BUF and of whole names, so that pid 1, which reads a name's
// path right after its header, never finds half of one (and wakes once, not once a name).
func (p *Pid1) Watch(ws []Watched) error {
	var msg []byte
	for _, w := range ws {
		size := 8 + len(w.Path)
		if size >= C.PIPE_BUF {
			return fmt.Errorf("watch %s: path too long", w.Path)
		}
		if len(msg)+size > C.PIPE_BUF {
			if _, err := p.link.Write(msg); err != nil {
				return err
			}
			msg = msg[:0]
		}
		msg = binary.NativeEndian.AppendUint32(msg, w.MntID)
		msg = binary.NativeEndian.AppendUint32(msg, C.JAIL_LINK_WATCH|uint32(len(w.Path))<<C.JAIL_LINK_WATCH_LEN_SHIFT)
		msg = append(msg, w.Path...)
	}
	if len(msg) == 0 {
		return nil
	}
	_, err := p.link.Write(msg)
	return err
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

// Link is what the setup tells pid 1 with the command's pid (Name).
type Link struct {
	Stays      bool // the setup waits for the command's end (AwaitCommand)
	Terminal   bool // the setup relays the command's pseudo-terminal and takes SIGWINCH
	HostLeaves bool // the host reads no report: pid 1 prints its own error, as the setup does
	Report     bool // the run is reported: pid 1 sends the host the command's end (wire.Exited)
}

// Name tells pid 1 the command's pid, which it forwards signals to from then on, and what l says.
func (p *Pid1) Name(command int, l Link) error {
	var flags uint32
	for _, f := range []struct {
		on   bool
		flag uint32
	}{{l.Stays, C.JAIL_LINK_STAYS}, {l.Terminal, C.JAIL_LINK_WINCH}, {l.HostLeaves, C.JAIL_LINK_HOST_LEAVES}, {l.Report, C.JAIL_LINK_REPORT}} {
		if f.on {
			flags |= f.flag
		}
	}
	return p.send(uint32(command), flags)
}

// send writes a struct jail_link, in one write.
func (p *Pid1) send(pid, flags uint32) error {
	msg := binary.NativeEndian.AppendUint32(nil, pid)
	_, err := p.link.Write(binary.NativeEndian.AppendUint32(msg, flags))
	return err
}

// AwaitCommand returns the command's wait status once pid 1 has reaped it.
func (p *Pid1) AwaitCommand() (syscall.WaitStatus, error) {
	ws, _, err := readWaited(p.back, "pid 1")
	return ws, err
}
