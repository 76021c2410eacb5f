// Package explain is --explain: in init, a seccomp user-notification listener watches the
// command's write-intent and connect calls (Start); each is judged against the plan (judge.go)
// and every distinct refusal goes to the host, which prints it with what would allow it
// (message.go). It only observes: the kernel's mounts, Landlock and seccomp decide as always.
package explain
