package restrict

import (
	"runtime"

	"golang.org/x/sys/unix"
)

// GoRestricting runs f on a new goroutine locked to an OS thread for good: f restricts that
// thread (capabilities, no_new_privs, Landlock, seccomp) and starts the command from it, and Go
// ends the thread with the goroutine. It is for a process that stays while the command runs, so
// f never runs on the thread-group leader: Landlock scopes a signal by the domain of the
// target's leader, so a restricted leader would put the process within the command's kill(2),
// and Go never ends the leader, which would stay restricted in a process with work left to do.
func GoRestricting(f func()) {
	go func() {
		runtime.LockOSThread()
		if unix.Gettid() != unix.Getpid() {
			f()
			return
		}
		// On the leader: hold it until f's goroutine has locked a thread of its own.
		locked := make(chan struct{})
		GoRestricting(func() { close(locked); f() })
		<-locked
		runtime.UnlockOSThread()
	}()
}
