// Package userns says why this host refuses jail a user namespace (a sysctl, AppArmor, a
// container's seccomp filter) and the exact fix: the hint jail's errors carry and `jail doctor`'s
// diagnosis come from here, and nowhere else.
package userns
