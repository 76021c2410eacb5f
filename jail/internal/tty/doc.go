// Package tty gives an interactive command a pseudo-terminal of its own, relayed to the caller's
// terminal, so that the caller's terminal never reaches the command (no TIOCSTI); the host gives
// the caller its terminal settings back. Stdio is the descriptors a command gets.
package tty
