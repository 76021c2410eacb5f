package spawn

/*
#include "slack.h"
*/
import "C"

import (
	"errors"
	"io/fs"
	"os"
	"strconv"
	"syscall"
)

// StepTimerSlack names RestoreThreadTimerSlack as a setup step.
const StepTimerSlack = "restore the timer slack for the command"

// CoarseSlack reports whether the setup's threads run with slack.c's coarse timer slack.
func CoarseSlack() bool {
	return C.jail_setup_slack > 0
}

// RestoreThreadTimerSlack gives the calling thread the caller's timer slack back, so that the
// command it starts (which inherits it, across execve too) has the caller's timers.
func RestoreThreadTimerSlack() error {
	if e := C.jail_restore_slack(); e < 0 {
		return &os.SyscallError{Syscall: "prctl PR_SET_TIMERSLACK", Err: syscall.Errno(-e)}
	}
	return nil
}

// RestoreTimerSlack gives every thread of a setup that stays for the run the caller's timer
// slack back, so that its timers (a terminal's drain, the end's wait for the sandbox to empty)
// fire as the caller's would. A thread sets another's slack only through /proc/TID (the
// sandbox's /proc by now, which lists the setup's threads).
func RestoreTimerSlack() error {
	if !CoarseSlack() {
		return nil
	}
	tasks, err := os.ReadDir("/proc/self/task")
	if err != nil {
		return err
	}
	slack := []byte(strconv.FormatInt(int64(C.jail_setup_slack), 10))
	for _, t := range tasks {
		// A thread may have ended since the listing (the one that started the command, say).
		err := os.WriteFile("/proc/"+t.Name()+"/timerslack_ns", slack, 0)
		if err != nil && !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, syscall.ESRCH) {
			return err
		}
	}
	return nil
}
