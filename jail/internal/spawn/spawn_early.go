package spawn

/*
#include "spawn.h"
*/
import "C"

import (
	"io"
	"os"

	"golang.org/x/sys/unix"
)

// isEarlyInit reports whether this process is the init spawn_early.c started: a child of jail's
// that went on into Go's runtime without an execve.
func IsEarlyInit() bool {
	return C.jail_is_early_init != 0
}

// earlyInit is the init spawn_early.c started before this runtime, waiting for its plan: its pid,
// the write end of its plan's pipe, the read end of its messages' pipe, the clone flags of its
// namespaces, and the pipe it reports a failed start on.
type EarlyInit struct {
	PID            int
	Plan, Messages *os.File
	NS             uintptr
	Errs           *os.File
}

// TakeEarlyInit returns the init spawn_early.c started, if any (pid 0: none). It is taken once.
func TakeEarlyInit() (e EarlyInit) {
	early := C.jail_early
	if early.pid <= 0 {
		return e
	}
	C.jail_early.pid = -1
	// Read in Go's poller, not in a blocking read(2) that holds a P all run (awaitExit says
	// why); os.Pipe's ends, on the other paths, are non-blocking already.
	unix.SetNonblock(int(early.msg_fd), true)
	return EarlyInit{
		PID:      int(early.pid),
		Plan:     os.NewFile(uintptr(early.plan_fd), "plan"),
		Messages: os.NewFile(uintptr(early.msg_fd), "messages"),
		NS:       uintptr(early.ns),
		Errs:     os.NewFile(uintptr(early.err_fd), "spawn errors"),
	}
}

// started waits until e's init is on its way (become_init closed its end of errs) or failed to
// start (it wrote the errno), and reports which.
func (e EarlyInit) Started() bool {
	defer e.Errs.Close()
	var errno [4]byte
	failed, _ := io.ReadFull(e.Errs, errno[:]) // 0: EOF, init is on its way
	return failed == 0
}
