package jail

import "os"

// commandTerminal is init's part: when the host found the run interactive, the command's
// pseudo-terminal from the sandbox's own devpts, and the stdio the command gets. Without one
// (no /dev/ptmx in the sandbox) the command runs on init's stdio, still in a session without a
// controlling terminal.
func commandTerminal(cfg *initConfig) (*ptyRelay, Stdio) {
	stdio := Stdio{In: os.Stdin, Out: os.Stdout, Err: os.Stderr}
	if !cfg.Terminal {
		return nil, stdio
	}
	tty, inner, err := openPTY(stdio)
	if err != nil {
		logf(cfg.Spec, "init: no pseudo-terminal for the command: %s", err)
		return nil, stdio
	}
	return tty, inner
}
