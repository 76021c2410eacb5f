package spawn

/*
#include <stdlib.h>
#include "audit.h"
#include "spawn.h"
*/
import "C"

import (
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"strings"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Init starts jail's init in the namespaces of flags, with files as its descriptors 0 to 4
// (jail_init_spawn says how), dying with the calling thread (which must stay locked), and in a
// session of its own, so that the terminal's Ctrl-C reaches only jail, which forwards it once,
// rather than init as well. It uses a vfork (spawn.c says why not syscall.ForkExec). It returns
// init's pid; errors are the errno of what failed.
func Init(flags uintptr, files [5]*os.File) (int, error) {
	s := (*C.struct_jail_spawn)(C.calloc(1, C.sizeof_struct_jail_spawn)) // the child may not touch Go's memory
	defer C.free(unsafe.Pointer(s))
	var fds [5]C.int
	for i, f := range files {
		fds[i] = C.int(f.Fd())
	}
	C.jail_init_spawn(s, C.int(flags), &fds[0], 1)
	errR, errW, err := os.Pipe()
	if err != nil {
		return 0, err
	}
	defer errR.Close()
	s.err_fd = C.int(errW.Fd())
	mapped := make(chan error, 1)
	var readyW, goR *os.File
	if flags&unix.CLONE_NEWUSER != 0 {
		var readyR, goW *os.File
		if readyR, readyW, goR, goW, err = pipes(); err != nil {
			errW.Close()
			return 0, err
		}
		s.ready_fd, s.go_fd, s.go_end = C.int(readyW.Fd()), C.int(goR.Fd()), C.int(goW.Fd())
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
		return 0, syscall.Errno(-pid)
	}
	err = <-mapped
	var errno [4]byte
	if n, _ := io.ReadFull(errR, errno[:]); err == nil && n == len(errno) {
		err = syscall.Errno(binary.NativeEndian.Uint32(errno[:]))
	}
	if err != nil {
		unix.Wait4(pid, nil, 0, nil)
		return 0, err
	}
	return pid, nil
}

// mapIDs writes the id maps of the child whose pid *pid holds once it says it is ready, then
// lets it go on. Closing goW unwritten stops it.
func mapIDs(readyR, goW *os.File, pid *C.pid_t) error {
	defer readyR.Close()
	defer goW.Close()
	if _, err := readyR.Read(make([]byte, 1)); err != nil {
		return nil // the child failed before it got here: it reports why
	}
	m := (*C.struct_jail_id_maps)(C.malloc(C.sizeof_struct_jail_id_maps))
	defer C.free(unsafe.Pointer(m))
	if e := C.jail_write_id_maps(*pid, m); e < 0 {
		return &IDMapError{Path: C.GoString(&m.path[0]), Map: mapText(m, C.GoString(&m.path[0])), Err: syscall.Errno(-e)}
	}
	_, err := goW.Write([]byte{0})
	return err
}

// mapText is what jail tried to write at path: the uid map, the gid map, or setgroups' "deny".
func mapText(m *C.struct_jail_id_maps, path string) string {
	switch {
	case strings.HasSuffix(path, "/uid_map"):
		return C.GoString(&m.uid_map[0])
	case strings.HasSuffix(path, "/gid_map"):
		return C.GoString(&m.gid_map[0])
	}
	return "deny"
}

// IDMapError is the kernel refusing init's id maps: the file, what jail wrote to it, and why.
type IDMapError struct {
	Path, Map string
	Err       syscall.Errno
}

func (e *IDMapError) Error() string {
	return fmt.Sprintf("write %q to %s: %s", e.Map, e.Path, e.Err)
}

func (e *IDMapError) Unwrap() error { return e.Err }

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

// InitArg0 is argv[0] of the sandbox init (spawn.c's jail_init_arg0). MaybeInit runs the init
// when it sees it; the host starts /proc/self/exe with it, so jail needs no second binary and no
// helper on disk.
var InitArg0 = C.GoString(C.jail_init_arg0)

// AuditArg0 is argv[0] of jail executed by its waiter to list what a run wrote unseen
// (audit.c); jail.MaybeInit runs package audit's Main when it sees it.
var AuditArg0 = C.GoString(C.jail_audit_arg0)
