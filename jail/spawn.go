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

// spawnRequest is how init is started: argv run from path, with files as its descriptors 0, 1,
// 2, ... in the namespaces of flags, in a new session, dying with the calling thread. With a
// user namespace the caller's identity is mapped in before it executes (jail_write_id_maps).
type spawnRequest struct {
	path  string
	argv  []string
	files []*os.File
	flags uintptr
}

// spawn starts req with a vfork (spawn.c says why not syscall.ForkExec). The calling thread
// must stay locked: the child dies when it exits. Errors are the errno of what failed.
func spawn(req spawnRequest) (*process, error) {
	s, free, err := newCSpawn(req)
	if err != nil {
		return nil, err
	}
	defer free()
	errR, errW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	defer errR.Close()
	s.err_fd = C.int(errW.Fd())
	s.ready_fd, s.go_fd = -1, -1
	mapped := make(chan error, 1)
	var readyW, goR *os.File
	if req.flags&unix.CLONE_NEWUSER != 0 {
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

// newCSpawn is req as jail_spawn takes it, in C memory (the child may not touch Go's), and the
// function that frees it.
func newCSpawn(req spawnRequest) (*C.struct_jail_spawn, func(), error) {
	s := (*C.struct_jail_spawn)(C.calloc(1, C.sizeof_struct_jail_spawn))
	if len(req.files) > len(s.fds) {
		C.free(unsafe.Pointer(s))
		return nil, nil, fmt.Errorf("spawn: %d descriptors, at most %d", len(req.files), len(s.fds))
	}
	for i, f := range req.files {
		s.fds[i] = C.int(f.Fd())
	}
	s.nfds = C.int(len(req.files))
	const cloned = unix.CLONE_NEWUSER | unix.CLONE_NEWPID // the child creates the others: spawn.h
	s.flags = C.int(req.flags & cloned)
	s.unshare_flags = C.int(req.flags &^ cloned)
	s.ambient_last_cap = -1
	if req.flags&unix.CLONE_NEWUSER != 0 {
		s.ambient_last_cap = C.jail_ambient_last_cap()
	}
	s.path = C.CString(req.path)
	argv, envp := cStrings(req.argv), cStrings(nil)
	s.argv, s.envp = &argv[0], &envp[0]
	return s, func() {
		C.free(unsafe.Pointer(s.path))
		freeCStrings(argv)
		freeCStrings(envp)
		C.free(unsafe.Pointer(s))
	}, nil
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

func cStrings(ss []string) []*C.char {
	cs := make([]*C.char, len(ss)+1)
	for i, s := range ss {
		cs[i] = C.CString(s)
	}
	return cs
}

func freeCStrings(cs []*C.char) {
	for _, c := range cs {
		C.free(unsafe.Pointer(c))
	}
}

// process is a child jail waits for: init, or the fallback's command. It is signalled through
// a pidfd, so that a signal sent as it is being reaped cannot reach a process reusing its pid.
type process struct {
	pid    int
	mu     sync.Mutex
	fd     int // pidfd; -1 once reaped
	waited bool
	ws     syscall.WaitStatus
	ru     syscall.Rusage
}

// newProcess takes pid, a child not yet waited for.
func newProcess(pid int) (*process, error) {
	fd, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		unix.Kill(pid, unix.SIGKILL)
		unix.Wait4(pid, nil, 0, nil)
		return nil, fmt.Errorf("pidfd_open: %w", err)
	}
	return &process{pid: pid, fd: fd}, nil
}

// signal sends sig, unless the process was reaped.
func (p *process) signal(sig syscall.Signal) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.fd >= 0 {
		unix.PidfdSendSignal(p.fd, sig, nil, 0)
	}
}

// wait reaps the process, recording its status and resource usage.
func (p *process) wait() error {
	var err error
	for {
		if _, err = syscall.Wait4(p.pid, &p.ws, 0, &p.ru); !errors.Is(err, syscall.EINTR) {
			break
		}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	unix.Close(p.fd)
	p.fd = -1
	p.waited = err == nil
	return err
}
