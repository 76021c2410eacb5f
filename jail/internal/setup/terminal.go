package setup

import (
	"os"

	"github.com/jail-sandbox/jail/jail/internal/tty"
)

// commandTerminal is init's part: when the host found the run interactive, the command's
// pseudo-terminal from the sandbox's own devpts, and the stdio the command gets. Without one
// (no /dev/ptmx in the sandbox) the command runs on init's stdio, still in a session without a
// controlling terminal.
func (s *setup) commandTerminal() (*tty.Relay, tty.Stdio) {
	stdio := tty.Stdio{In: os.Stdin, Out: os.Stdout, Err: os.Stderr}
	if !s.cfg.Terminal {
		return nil, stdio
	}
	tty, inner, err := tty.Open(stdio)
	if err != nil {
		s.log.Printf("init: no pseudo-terminal for the command: %s", err)
		return nil, stdio
	}
	return tty, inner
}
