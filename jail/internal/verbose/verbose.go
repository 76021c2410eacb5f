package verbose

import (
	"fmt"
	"os"
	"time"

	"golang.org/x/sys/unix"
)

// Log writes -v's lines when it is on. Each ends in the time since jail started, on one clock
// for the host and init (the host notes it before Go's runtime, init takes it from the plan), so
// the two processes' lines show which of them a run waited for. The zero Log writes nothing.
type Log struct {
	on      bool
	started int64 // when jail started: CLOCK_MONOTONIC, nanoseconds
}

// New returns a Log that writes when on, counting from started (CLOCK_MONOTONIC, nanoseconds).
func New(on bool, started int64) Log {
	return Log{on: on, started: started}
}

// On reports whether l writes.
func (l Log) On() bool { return l.on }

// Printf writes one "jail: " line to this process's stderr, ending in the time since jail
// started. In the sandbox that is the command's stderr, and jail's CLI gives the command its
// own, so the host's and init's steps interleave in order on one stream.
func (l Log) Printf(format string, args ...any) {
	if l.on {
		l.line(monotonic(), format, args...)
	}
}

// At is Printf for a step that began at t, logged later. t comes from time.Now (the vDSO, so
// that init's prelude can note its steps' times cheaply on every run) and is put on the start's
// clock only here, when l writes.
func (l Log) At(t time.Time, format string, args ...any) {
	if l.on {
		l.line(monotonicAt(t), format, args...)
	}
}

// line writes a line for a step at CLOCK_MONOTONIC at.
func (l Log) line(at int64, format string, args ...any) {
	fmt.Fprintf(os.Stderr, "jail: "+format+" (+%.2f ms)\n", append(args, float64(at-l.started)/1e6)...)
}

// monotonicAt is t on CLOCK_MONOTONIC. Go's clock is the same one counted from another origin,
// so one reading of each gives the offset, but only when nothing held this thread up between
// them (a preempted SCHED_BATCH thread once put a step 0.1 ms early, before the plan it read had
// been sent): the pair is read again until its readings fall within a few microseconds.
func monotonicAt(t time.Time) int64 {
	for try := 0; ; try++ {
		before := time.Now()
		m := monotonic()
		if d := time.Since(before); d < 20*time.Microsecond || try == 10 {
			return m - int64(d/2) - int64(before.Sub(t))
		}
	}
}

// monotonic is CLOCK_MONOTONIC in nanoseconds, the clock of jail's start (no namespace changes
// it). x/sys/unix reads it with a system call, not the vDSO: only verbose runs call it.
func monotonic() int64 {
	var t unix.Timespec
	unix.ClockGettime(unix.CLOCK_MONOTONIC, &t)
	return t.Nano()
}
