package restrict

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"

	"github.com/jail-sandbox/jail/jail/internal/verbose"
	"github.com/jail-sandbox/jail/plan"
)

// SetRlimits applies the plan's resource limits l, soft = hard, inherited by the command; the CPU
// limit's hard one is a second above, so the command gets SIGXCPU, which says why it died (at a
// hard limit the kernel sends SIGKILL), and SIGKILL a second later if it ignores that. A zero
// leaves a limit as inherited, except core dumps, which are off unless the Spec allows them. A
// limit above the inherited hard one is held at that: only root in the host's user namespace
// could raise it.
func SetRlimits(l plan.Limits, log verbose.Log) error {
	for _, r := range []struct {
		name     string
		resource int
		value    uint64
		always   bool
	}{
		{"cpu", unix.RLIMIT_CPU, l.CPUSeconds, false},
		{"as", unix.RLIMIT_AS, l.AddressSpace, false},
		{"nproc", unix.RLIMIT_NPROC, withInitHeadroom(l.Processes), false},
		{"nofile", unix.RLIMIT_NOFILE, l.OpenFiles, false},
		{"fsize", unix.RLIMIT_FSIZE, l.FileSize, false},
		{"core", unix.RLIMIT_CORE, l.Core, true},
	} {
		if r.value == 0 && !r.always {
			continue
		}
		var cur unix.Rlimit
		if err := unix.Getrlimit(r.resource, &cur); err != nil {
			return fmt.Errorf("getrlimit %s: %w", r.name, err)
		}
		v := min(r.value, cur.Max)
		if v < r.value {
			log.Printf("init: rlimit %s %d held at the inherited hard limit %d", r.name, r.value, v)
		}
		hard := v
		if r.resource == unix.RLIMIT_CPU {
			hard = min(v+1, cur.Max)
		}
		if err := unix.Setrlimit(r.resource, &unix.Rlimit{Cur: v, Max: hard}); err != nil {
			return fmt.Errorf("setrlimit %s %d: %w", r.name, v, err)
		}
	}
	return nil
}

// initHeadroom is how many tasks init may still start after the limits are set: the Go runtime
// adds threads when it needs them, and a refused thread kills init, and with it the sandbox.
const initHeadroom = 4

// withInitHeadroom turns the profile's process limit into RLIMIT_NPROC. The kernel counts every
// task of this user in the sandbox's user namespace against it (since Linux 5.14; before, every
// task of the user on the host), and init's own threads are among them: they are added on top,
// so the command gets the processes the profile grants and init cannot be starved by it.
func withInitHeadroom(processes uint64) uint64 {
	if processes == 0 {
		return 0
	}
	tasks, err := os.ReadDir("/proc/self/task")
	if err != nil {
		return processes + initHeadroom
	}
	return processes + uint64(len(tasks)) + initHeadroom
}
