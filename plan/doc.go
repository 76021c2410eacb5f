// Package plan is the plan of one sandbox: a plain value (Spec) holding every step the launcher
// executes and every restriction it applies, resolved on the host. Package profiles produces a
// Spec from TOML profiles and flags; package jail executes one and decides nothing; `jail
// --dry-run` prints it. Neither imports the other: they meet here.
package plan
