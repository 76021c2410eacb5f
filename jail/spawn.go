package jail

/*
#include <stdlib.h>
#include "spawn.h"
*/
import "C"

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// spawnInit starts jail's init in the namespaces of flags, with files as its descriptors 0 to 4
// (jail_init_spawn says how), dying with the calling thread (which must stay locked), and in a
// session of its own, so that the terminal's Ctrl-C reaches only jail, which forwards it once,
// rather than init as well. It uses a vfork (spawn.c says why not syscall.ForkExec). Errors are
// the errno of what failed.
func spawnInit(flags uintptr, files [5]*os.File) (*process, error) {
	s := (*C.struct_jail_spawn)(C.calloc(1, C.sizeof_struct_jail_spawn)) // the child may not touch Go's memory
	defer C.free(unsafe.Pointer(s))
	var fds [5]C.int
	for i, f := range files {
		fds[i] = C.int(f.Fd())
	}
	C.jail_init_spawn(s, C.int(flags), &fds[0], 1)
	errR, errW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	defer errR.Close()
	s.err_fd = C.int(errW.Fd())
	mapped := make(chan error, 1)
	var readyW, goR *os.File
	if flags&unix.CLONE_NEWUSER != 0 {
		var readyR, goW *os.File
		if readyR, readyW, goR, goW, err = pipes(); err != nil {
			errW.Close()
			return nil, err
		}
		s.ready_fd, s.go_fd = C.int(readyW.Fd()), C.int(goR.Fd())
		// The child waits in the vfork for its maps, with this thread suspended until it
		// executes: another goroutine writes them.
		go func() { mapped <- mapIDs(readyR, goW, &s.pid) }()
	} else {
		mapped <- nil
	}

	syscall.ForkLock.Lock()
	pid := int(C.jail_spawn(s))
	syscall.ForkLock.Unlock()
	errW.Close()
	closeAll(readyW, goR) // the child has executed or exited: mapIDs reads EOF if it never got ready
	if pid < 0 {
		return nil, syscall.Errno(-pid)
	}
	err = <-mapped
	var errno [4]byte
	if n, _ := io.ReadFull(errR, errno[:]); err == nil && n == len(errno) {
		err = syscall.Errno(binary.NativeEndian.Uint32(errno[:]))
	}
	if err != nil {
		unix.Wait4(pid, nil, 0, nil)
		return nil, err
	}
	return newProcess(pid)
}

// mapIDs writes the id maps of the child whose pid *pid holds once it says it is ready, then
// lets it go on. Closing goW unwritten stops it.
func mapIDs(readyR, goW *os.File, pid *C.pid_t) error {
	defer readyR.Close()
	defer goW.Close()
	if _, err := readyR.Read(make([]byte, 1)); err != nil {
		return nil // the child failed before it got here: it reports why
	}
	if e := C.jail_write_id_maps(*pid); e < 0 {
		return fmt.Errorf("write the id maps: %w", syscall.Errno(-e))
	}
	_, err := goW.Write([]byte{0})
	return err
}

// closeAll closes the files that are not nil.
func closeAll(files ...*os.File) {
	for _, f := range files {
		if f != nil {
			f.Close()
		}
	}
}

// pipes returns two pipes' ends.
func pipes() (r1, w1, r2, w2 *os.File, err error) {
	if r1, w1, err = os.Pipe(); err != nil {
		return
	}
	if r2, w2, err = os.Pipe(); err != nil {
		r1.Close()
		w1.Close()
	}
	return
}

// process is a child jail waits for: init, or the fallback's command. It is signalled through
// a pidfd, so that a signal sent as it is being reaped cannot reach a process reusing its pid,
// and its exit is awaited on the same pidfd (awaitExit says why).
type process struct {
	pid    int
	mu     sync.Mutex
	pidfd  *os.File // non-blocking, in Go's poller; nil once reaped
	waiter *waiter  // reaps the process when it is the parent (waiter.go); nil: jail does
	waited bool
	ws     syscall.WaitStatus
	ru     syscall.Rusage
}

// newProcess takes pid, a child not yet waited for.
func newProcess(pid int) (*process, error) {
	fd, err := unix.PidfdOpen(pid, unix.PIDFD_NONBLOCK)
	if err != nil {
		unix.Kill(pid, unix.SIGKILL)
		unix.Wait4(pid, nil, 0, nil)
		return nil, fmt.Errorf("pidfd_open: %w", err)
	}
	return &process{pid: pid, pidfd: os.NewFile(uintptr(fd), "pidfd")}, nil
}

// signal sends sig, unless the process was reaped.
func (p *process) signal(sig syscall.Signal) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.pidfd == nil {
		return
	}
	if rc, err := p.pidfd.SyscallConn(); err == nil {
		rc.Control(func(fd uintptr) { unix.PidfdSendSignal(int(fd), sig, nil, 0) })
	}
}

// wait reaps the process, or has its waiter reap it, recording its status and resource usage.
func (p *process) wait() error {
	var err error
	if p.waiter != nil {
		p.ws, p.ru, err = p.waiter.waitInit()
	} else {
		p.awaitExit()
		for {
			if _, err = syscall.Wait4(p.pid, &p.ws, 0, &p.ru); !errors.Is(err, syscall.EINTR) {
				break
			}
		}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.pidfd.Close()
	p.pidfd = nil
	p.waited = err == nil
	return err
}

// awaitExit returns once the process has exited: its pidfd polls readable. It waits parked in
// Go's poller, not in wait4: a goroutine blocked in a syscall keeps one of the runtime's Ps, and
// while one does, the runtime's monitor thread wakes every 20 µs or so, for up to 10 ms into the
// command, instead of sleeping until there is work. wait4 then returns at once.
func (p *process) awaitExit() {
	rc, err := p.pidfd.SyscallConn()
	if err != nil {
		return // wait4 blocks instead
	}
	rc.Read(func(fd uintptr) bool {
		n, err := unix.Poll([]unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}, 0)
		return n != 0 || err != nil // exited, or let wait4 say
	})
}
