// Package random names what a run makes on the host so that no other user can guess the name
// and make it first: bytes from getrandom(2), in hex.
package random

import (
	"encoding/hex"
	"fmt"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Hex returns n random bytes (1 to 256) in hex; where getrandom fails (a seccomp filter
// around jail refusing it), zeros and the error. It makes the system call itself: crypto/rand
// would add its package set-up to every start of jail, and unix.Getrandom goes through the
// vDSO, whose first call in a thread sets up that thread's state (13-15 µs in a fresh process,
// against 1.5 µs for the system call; a run asks once or twice).
func Hex(n int) (string, error) {
	b := make([]byte, n)
	for {
		// Up to 256 bytes come whole once the pool is up, and without GRND_NONBLOCK only a
		// signal interrupts the wait for it.
		_, _, errno := unix.Syscall(unix.SYS_GETRANDOM, uintptr(unsafe.Pointer(&b[0])), uintptr(n), 0)
		switch errno {
		case 0:
			return hex.EncodeToString(b), nil
		case unix.EINTR:
		default:
			return hex.EncodeToString(make([]byte, n)), fmt.Errorf("getrandom: %w", errno)
		}
	}
}
