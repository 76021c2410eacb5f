package main

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

const sizeofPerfEventAttr = unsafe.Sizeof(unix.PerfEventAttr{})

// addr is the address of a package-level buffer, for raw syscall arguments.
func addr[T any](p *T) uintptr { return uintptr(unsafe.Pointer(p)) }

// uffdUserModeOnly is UFFD_USER_MODE_ONLY (linux/userfaultfd.h), which lets an unprivileged
// process create a userfaultfd whatever vm.unprivileged_userfaultfd says.
const uffdUserModeOnly = 1

// addrNoRandomize is ADDR_NO_RANDOMIZE (linux/personality.h): turns ASLR off.
const addrNoRandomize = 0x0040000
