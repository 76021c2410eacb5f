package jail

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
func isEarlyInit() bool {
	return C.jail_is_early_init != 0
}

// earlyInit is the init spawn_early.c started before this runtime, waiting for its plan: its pid,
// the write end of its plan's pipe, the read end of its messages' pipe, the clone flags of its
// namespaces, and the pipe it reports a failed start on.
type earlyInit struct {
	pid            int
	plan, messages *os.File
	ns             uintptr
	errs           *os.File
}

// takeEarly returns the init spawn_early.c started, if any (pid 0: none). It is taken once.
func takeEarly() (e earlyInit) {
	early := C.jail_early
	if early.pid <= 0 {
		return e
	}
	C.jail_early.pid = -1
	// Read in Go's poller, not in a blocking read(2) that holds a P all run (awaitExit says
	// why); os.Pipe's ends, on the other paths, are non-blocking already.
	unix.SetNonblock(int(early.msg_fd), true)
	return earlyInit{
		pid:      int(early.pid),
		plan:     os.NewFile(uintptr(early.plan_fd), "plan"),
		messages: os.NewFile(uintptr(early.msg_fd), "messages"),
		ns:       uintptr(early.ns),
		errs:     os.NewFile(uintptr(early.err_fd), "spawn errors"),
	}
}

// started waits until e's init is on its way (become_init closed its end of errs) or failed to
// start (it wrote the errno), and reports which.
func (e earlyInit) started() bool {
	defer e.errs.Close()
	var errno [4]byte
	failed, _ := io.ReadFull(e.errs, errno[:]) // 0: EOF, init is on its way
	return failed == 0
}
