package jail

/*
#include "batch.h"
*/
import "C"

import (
	"os"

	"golang.org/x/sys/unix"

	"github.com/jail-sandbox/jail/profiles"
)

// stepSchedOther names restoreSchedOther as a setup step.
const stepSchedOther = "restore SCHED_OTHER for the command"

// batched reports whether jail switched its own threads to SCHED_BATCH (batch.c).
func batched() bool {
	return C.jail_batch != 0
}

// restoreSchedOther gives the calling thread SCHED_OTHER back, keeping its nice value, so that
// the command it starts is scheduled as jail's caller was.
func restoreSchedOther(*profiles.Spec) error {
	attr, err := unix.SchedGetAttr(0, 0)
	if err != nil {
		return &os.SyscallError{Syscall: "sched_getattr", Err: err}
	}
	attr.Policy = unix.SCHED_NORMAL
	if err := unix.SchedSetAttr(0, attr, 0); err != nil {
		return &os.SyscallError{Syscall: "sched_setattr", Err: err}
	}
	return nil
}
