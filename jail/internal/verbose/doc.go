// Package verbose writes -v's lines: one per setup step, on stderr, each ending in the time since
// jail started on one clock for the host and init.
package verbose
