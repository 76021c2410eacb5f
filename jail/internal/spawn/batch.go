package spawn

/*
#include "batch.h"
*/
import "C"

import (
	"os"
	"syscall"
)

// StepSchedOther names RestoreSchedOther as a setup step.
const StepSchedOther = "restore SCHED_OTHER for the command"

// batched reports whether jail switched its own threads to SCHED_BATCH (batch.c).
func Batched() bool {
	return C.jail_batch != 0
}

// RestoreSchedOther gives the calling thread SCHED_OTHER back, keeping its nice value, so that
// the command it starts is scheduled as jail's caller was.
func RestoreSchedOther() error {
	if e := C.jail_unbatch_thread(); e < 0 {
		return &os.SyscallError{Syscall: "sched_setscheduler", Err: syscall.Errno(-e)}
	}
	return nil
}
