package jail

/*
#include "spawn.h"
*/
import "C"

import (
	"io"
	"os"

	"golang.org/x/sys/unix"

	"github.com/jail-sandbox/jail/profiles"
)

// takeEarlyInit returns the init spawn_early.c started before this runtime, as a sandbox
// waiting for its plan, when it runs and fits: the namespaces ns, and stdio this process's own
// (it has descriptors 0, 1 and 2). One that does not fit is killed. It is taken once.
func takeEarlyInit(ns profiles.Namespaces, stdio Stdio, signals *subscription) *sandbox {
	early := C.jail_early
	if early.pid <= 0 {
		return nil
	}
	C.jail_early.pid = -1
	pid := int(early.pid)
	plan := os.NewFile(uintptr(early.plan_fd), "plan")
	messages := os.NewFile(uintptr(early.msg_fd), "messages")
	errs := os.NewFile(uintptr(early.err_fd), "spawn errors")
	defer errs.Close()
	guessed := profiles.NamespacesFor("")
	guessed.Net = early.net != 0
	var errno [4]byte
	executed := func() bool { n, _ := io.ReadFull(errs, errno[:]); return n == 0 }() // EOF: init runs
	if !executed || guessed != ns || stdio != (Stdio{os.Stdin, os.Stdout, os.Stderr}) {
		unix.Kill(pid, unix.SIGKILL)
		unix.Wait4(pid, nil, 0, nil)
		plan.Close()
		messages.Close()
		return nil
	}
	proc, err := newProcess(pid)
	if err != nil {
		plan.Close()
		messages.Close()
		return nil
	}
	return newSandbox(proc, plan, messages, stdio, signals)
}
