package verbose

import (
	"fmt"
	"os"
	"time"

	"golang.org/x/sys/unix"

	"github.com/jail-sandbox/jail/jail/internal/spawn"
	"github.com/jail-sandbox/jail/plan"
)

// started is when jail started (CLOCK_MONOTONIC, nanoseconds), which verbose lines count from:
// noted before Go's runtime in the host, taken from the plan in init (wire.Config.Started), so the
// host's and init's lines share one clock and show which of the two a run waited for.
var Started = spawn.Started

// Logf writes one "jail: " line to this process's stderr when the Spec asks for a verbose run,
// ending in the time since jail started. In the sandbox that is the command's stderr, and jail's
// CLI gives the command its own, so the host's and init's steps interleave in order on one
// stream.
func Logf(spec *plan.Spec, format string, args ...any) {
	if spec.Verbose {
		logLine(monotonic(), format, args...)
	}
}

// LogAt is Logf for a step that began at t, logged later. t comes from time.Now (the vDSO, so
// that init's prelude can note its steps' times cheaply on every run) and is put on started's
// clock only here, in a verbose run.
func LogAt(spec *plan.Spec, t time.Time, format string, args ...any) {
	if spec.Verbose {
		logLine(monotonicAt(t), format, args...)
	}
}

// logLine writes a verbose line for a step at CLOCK_MONOTONIC at.
func logLine(at int64, format string, args ...any) {
	fmt.Fprintf(os.Stderr, "jail: "+format+" (+%.2f ms)\n", append(args, float64(at-Started)/1e6)...)
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

// monotonic is CLOCK_MONOTONIC in nanoseconds, the clock started is on (no namespace changes
// it). x/sys/unix reads it with a system call, not the vDSO: only verbose runs call it.
func monotonic() int64 {
	var t unix.Timespec
	unix.ClockGettime(unix.CLOCK_MONOTONIC, &t)
	return t.Nano()
}
