// Package mount builds the sandbox's root filesystem from the plan's ordered mounts, inside
// init's new mount namespace: a scratch tmpfs is pivoted into, each mount is made with the new
// mount API (a read-only bind is never visible writable) without following a symlink, and the
// new root is entered with pivot_root, the host's tree detached.
package mount
