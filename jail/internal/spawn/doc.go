// Package spawn is the C that starts and runs jail's processes, and its thin cgo glue: the
// constructor that forks the sandbox's init before Go's runtime (spawn_early.c), the waiter the
// caller waits for (waiter.c), the sandbox's pid 1 (pid1.c), init started with a vfork
// (spawn.c), SCHED_BATCH (batch.c), the setup's timer slack (slack.c) and the start time
// (started.c). README.md says which process runs which file, when, and why each is C.
package spawn
