package jail

/*
#include "spawn.h"
*/
import "C"

import (
	"io"
	"os"

	"golang.org/x/sys/unix"

	"github.com/jail-sandbox/jail/plan"
)

// isEarlyInit reports whether this process is the init spawn_early.c started: a child of jail's
// that went on into Go's runtime without an execve.
func isEarlyInit() bool {
	return C.jail_is_early_init != 0
}

// takeEarlyInit returns the init spawn_early.c started before this runtime, as a sandbox
// waiting for its plan, when it runs and fits: the namespaces ns, and stdio this process's own
// (it has descriptors 0, 1 and 2). One that does not fit is killed. It is taken once. w, when
// not nil, is init's parent, which reaps it (waiter.c).
func takeEarlyInit(ns plan.Namespaces, stdio Stdio, signals *subscription, w *waiter) *sandbox {
	early := C.jail_early
	if early.pid <= 0 {
		return nil
	}
	C.jail_early.pid = -1
	errs := os.NewFile(uintptr(early.err_fd), "spawn errors")
	defer errs.Close()
	plan := os.NewFile(uintptr(early.plan_fd), "plan")
	// Read in Go's poller, not in a blocking read(2) that holds a P all run (awaitExit says
	// why); os.Pipe's ends, on the other paths, are non-blocking already.
	unix.SetNonblock(int(early.msg_fd), true)
	messages := os.NewFile(uintptr(early.msg_fd), "messages")
	proc, err := newProcess(int(early.pid))
	if err != nil {
		plan.Close()
		messages.Close()
		return nil
	}
	proc.waiter = w
	sb := newSandbox(proc, plan, messages, stdio, signals)
	flags, _ := namespaces(ns)
	var errno [4]byte
	failed, _ := io.ReadFull(errs, errno[:]) // 0: EOF, init is on its way (become_init)
	if failed > 0 || flags != uintptr(early.ns) || stdio != (Stdio{os.Stdin, os.Stdout, os.Stderr}) {
		sb.discard()
		return nil
	}
	return sb
}
