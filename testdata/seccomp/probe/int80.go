package main

// int80 makes syscall nr through the i386 entry point (int $0x80), as a 32-bit program would.
func int80(nr uintptr) uintptr
