package setup

import (
	"os"
	"strconv"

	"golang.org/x/sys/unix"

	"github.com/jail-sandbox/jail/jail/internal/fail"
	"github.com/jail-sandbox/jail/jail/internal/spawn"
)

// binaryFd is where the spawner finds jail's binary (spawner.c's BINARY_FD).
const binaryFd = 3

// startSpawner starts a persistent sandbox's spawner as a run's command is started, from the
// restricted thread: jail's own binary as spawn.SpawnerArg0, with init's stdin (the keeper's
// channel) as its stdin and the binary itself as descriptor 3, from which it runs jail's helpers.
// The binary lies beneath no grant: Landlock lets this one file execute, through the
// descriptor, and nothing else of it. The descriptor is opened here, before the restrictions,
// from the magic link to this process's own executable, which leads out of the sandbox's root.
func (s *setup) startSpawner() (int, error) {
	bin, err := unix.Open("/proc/self/exe", unix.O_PATH|unix.O_CLOEXEC, 0)
	if err != nil {
		return 0, fail.New("open", "jail's binary", err)
	}
	defer unix.Close(bin)
	null, err := os.OpenFile(os.DevNull, os.O_RDWR, 0)
	if err != nil {
		return 0, fail.New("open", os.DevNull, err)
	}
	defer null.Close()
	s.exec = []string{"/proc/self/fd/" + strconv.Itoa(bin)}
	timeout := strconv.FormatInt(int64(s.spec.Limits.TimeoutSeconds*1e9), 10) // its commands' default
	return s.startRestricted(launch{
		path:  "/proc/self/fd/" + strconv.Itoa(binaryFd), // the child's own, once its descriptors are placed
		argv:  []string{spawn.SpawnerArg0, timeout},
		files: []uintptr{os.Stdin.Fd(), null.Fd(), null.Fd(), uintptr(bin)},
	})
}

// leaveSpawnersChannel gives a setup that stays /dev/null for the keeper's channel, which the
// spawner alone serves.
func leaveSpawnersChannel() {
	if null, err := os.OpenFile(os.DevNull, os.O_RDWR, 0); err == nil {
		unix.Dup2(int(null.Fd()), 0)
		null.Close()
	}
}
