//go:build !amd64

package seccomp

// Watching (--explain) is described for x86_64 only.
var watchedCalls []watchedCall
