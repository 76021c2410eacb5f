package setup

import (
	"os"

	"github.com/jail-sandbox/jail/jail/internal/tty"
	"github.com/jail-sandbox/jail/jail/internal/verbose"
	"github.com/jail-sandbox/jail/jail/internal/wire"
)

// commandTerminal is init's part: when the host found the run interactive, the command's
// pseudo-terminal from the sandbox's own devpts, and the stdio the command gets. Without one
// (no /dev/ptmx in the sandbox) the command runs on init's stdio, still in a session without a
// controlling terminal.
func commandTerminal(cfg *wire.Config) (*tty.Relay, tty.Stdio) {
	stdio := tty.Stdio{In: os.Stdin, Out: os.Stdout, Err: os.Stderr}
	if !cfg.Terminal {
		return nil, stdio
	}
	tty, inner, err := tty.Open(stdio)
	if err != nil {
		verbose.Logf(cfg.Spec, "init: no pseudo-terminal for the command: %s", err)
		return nil, stdio
	}
	return tty, inner
}
