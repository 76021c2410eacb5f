package spawn

/*
#include "placeholders.h"
#include "spawn.h"
*/
import "C"

import (
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/jail-sandbox/jail/jail/internal/fail"
)

// waiter is the host's link to waiter.c: the jail process the caller waits for, parent of the
// init spawn_early.c started, when this process is the host it forked. hand tells it where to
// forward signals ('S', 'I') and that the host leaves the sandbox to it ('T', 'H'); back brings
// init's wait status and resource usage once it has reaped init.
type Waiter struct {
	hand, back *os.File
}

// readWaited reads C's struct rusage as Go's: the same kernel structure. Both sizes must match.
var (
	_ [unsafe.Sizeof(syscall.Rusage{}) - C.sizeof_struct_rusage]byte
	_ [C.sizeof_struct_rusage - unsafe.Sizeof(syscall.Rusage{})]byte
)

// TakeWaiter returns the link to the waiter, or nil when this process is the one jail's caller
// waits for. It is taken once.
func TakeWaiter() *Waiter {
	early := &C.jail_early
	if early.hand_fd < 0 {
		return nil
	}
	w := &Waiter{hand: newPipeEnd(early.hand_fd, "waiter hand"), back: newPipeEnd(early.back_fd, "waiter back")}
	early.hand_fd, early.back_fd = -1, -1
	return w
}

// newPipeEnd wraps a pipe's end for Go's poller, where a goroutine waiting on it does not hold
// a P (process.awaitExit says why that matters).
func newPipeEnd(fd C.int, name string) *os.File {
	unix.SetNonblock(int(fd), true)
	return os.NewFile(uintptr(fd), name)
}

// forwardToInit tells the waiter to forward the signals jail is sent to init, its child, which
// this process has adopted. Nil-safe.
func (w *Waiter) ToInit() {
	if w != nil {
		w.hand.Write([]byte{'I'})
	}
}

// toHost tells the waiter to forward the signals jail is sent to this process, which passes them
// to an init of its own (forwardHere).
func (w *Waiter) ToHost() {
	w.hand.Write([]byte{'S'})
}

// MaxHandOverFiles is how many descriptors HandOver can pass (waiter.c: JAIL_HAND_MAX_FDS).
const MaxHandOverFiles = C.JAIL_HAND_MAX_FDS

// handOver leaves the sandbox to the waiter and ends this process: init has its plan, and the
// waiter forwards signals to init, reaps it and exits with the command's status. With a
// deadline (zero: none), the waiter kills the sandbox then, prints expired as jail's error and
// exits with its status. audit (nil: none) is the run's audit baseline (audit.Encode, in a
// file): once init is reaped, the waiter executes jail as AuditArg0 with it when a sentinel
// changed. held, at most MaxHandOverFiles, is the run's hold on its placeholders
// (placeholder.Claim), which the waiter releases once audit has been looked at and pid 1 has
// left its namespaces (the end pipe's EOF after its byte), or else once it has reaped init.
func (w *Waiter) HandOver(deadline time.Time, expired *fail.Error, audit *os.File, held []*os.File) {
	msg := make([]byte, 0, 64)
	if !deadline.IsZero() {
		// 'T', the time left in ns, the exit status, the error's length and text (waiter.c).
		text := expired.Error()
		text = text[:min(len(text), 255)]
		msg = append(msg, 'T')
		msg = binary.NativeEndian.AppendUint64(msg, uint64(max(time.Until(deadline), 1))) // memcpy'd
		msg = append(msg, byte(expired.Exit), byte(len(text)))
		msg = append(msg, text...)
	}
	var fds []int
	if audit != nil { // 'a': the first descriptor is the audit's (waiter.c)
		msg = append(msg, 'a')
		fds = append(fds, int(audit.Fd()))
	}
	msg = append(msg, 'H')
	for _, f := range held {
		fds = append(fds, int(f.Fd()))
	}
	if rc, err := w.hand.SyscallConn(); err == nil { // one message: the descriptors go with the 'H'
		rc.Write(func(fd uintptr) bool {
			_, err := unix.SendmsgN(int(fd), msg, unix.UnixRights(fds...), nil, 0)
			return err != unix.EAGAIN
		})
	}
	os.Exit(0)
}

// waitInit returns init's wait status and resource usage once the waiter has reaped it.
func (w *Waiter) WaitInit() (syscall.WaitStatus, syscall.Rusage, error) {
	return readWaited(w.back, "jail's waiter")
}

// readWaited reads a struct jail_waited from r, which a C parent (waiter.c, pid1.c) writes once
// it has reaped a child.
func readWaited(r io.Reader, from string) (syscall.WaitStatus, syscall.Rusage, error) {
	var msg C.struct_jail_waited
	buf := unsafe.Slice((*byte)(unsafe.Pointer(&msg)), C.sizeof_struct_jail_waited)
	if _, err := io.ReadFull(r, buf); err != nil {
		return 0, syscall.Rusage{}, fmt.Errorf("read a wait status from %s: %w", from, err)
	}
	return syscall.WaitStatus(msg.wait_status), *(*syscall.Rusage)(unsafe.Pointer(&msg.rusage)), nil
}
