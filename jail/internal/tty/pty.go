package tty

import (
	"io"
	"os"
	"os/signal"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/jail-sandbox/jail/jail/internal/fail"
)

// Relay gives an interactive command a pseudo-terminal of its own and relays it to the
// caller's terminal. The command takes the slave as controlling terminal in its new session, so
// job control, Ctrl-C and resizing work, while the caller's terminal never reaches the command:
// TIOCSTI and friends reach only the pseudo-terminal. In a sandbox, init allocates it from the
// sandbox's own devpts instance (so tty(1) names it) and relays; the host only gives the caller
// its terminal settings back (CallerTerminal), also when init is killed. Without namespaces (the
// fallback), jail itself allocates and relays.
type Relay struct {
	master, Slave *os.File
	term          *os.File      // the caller's terminal, read from (stdin)
	out           *os.File      // the caller's terminal, written to
	saved         *unix.Termios // the caller's settings, restored at the end
	drained       chan struct{} // closed when the command's output has all been written
	noInput       bool          // the caller's keystrokes are not relayed (Attach)
	quiet         atomic.Int64  // once draining: how long without output ends the relay
}

// IsTerminal reports whether f is a terminal.
func IsTerminal(f *os.File) bool {
	if f == nil {
		return false
	}
	_, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS)
	return err == nil
}

// inBackground reports whether the terminal f is this process's controlling terminal and this
// process is not in its foreground process group. Then (`jail -- CMD &`) switching the terminal
// to raw mode or reading it would stop jail with SIGTTOU or SIGTTIN.
func inBackground(f *os.File) bool {
	pgrp, err := unix.IoctlGetInt(int(f.Fd()), unix.TIOCGPGRP)
	return err == nil && pgrp != unix.Getpgrp() // ENOTTY: not our controlling terminal
}

// interactive reports whether the command should get a pseudo-terminal: stdin and stdout or
// stderr are terminals, and jail runs in the foreground.
func Interactive(stdio Stdio) bool {
	return IsTerminal(stdio.In) && !inBackground(stdio.In) && (IsTerminal(stdio.Out) || IsTerminal(stdio.Err))
}

// CallerTerminal is the caller's terminal as it was before the run.
type CallerTerminal struct {
	f     *os.File
	saved *unix.Termios
}

// SaveTerminal records the settings of the caller's terminal f.
func SaveTerminal(f *os.File) *CallerTerminal {
	t, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS)
	if err != nil {
		return nil
	}
	return &CallerTerminal{f: f, saved: t}
}

// restore gives the caller its terminal settings back.
func (c *CallerTerminal) Restore() {
	if c != nil {
		unix.IoctlSetTermios(int(c.f.Fd()), unix.TCSETS, c.saved)
	}
}

// Open allocates a pseudo-terminal (from /dev/ptmx as this process sees it) when the run is
// interactive, and returns the stdio the command must get: the slave in place of every
// terminal. Otherwise it returns stdio as given and a nil relay.
func Open(stdio Stdio) (*Relay, Stdio, error) {
	if !Interactive(stdio) {
		return nil, stdio, nil
	}
	out := stdio.Out
	if !IsTerminal(out) {
		out = stdio.Err
	}
	mfd, err := unix.Open("/dev/ptmx", unix.O_RDWR|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, stdio, fail.New("open", "/dev/ptmx", err)
	}
	master := os.NewFile(uintptr(mfd), "/dev/ptmx")
	if err := unix.IoctlSetPointerInt(mfd, unix.TIOCSPTLCK, 0); err != nil {
		master.Close()
		return nil, stdio, fail.New("unlock pseudo-terminal", "", err)
	}
	sfd, _, errno := unix.Syscall(unix.SYS_IOCTL, uintptr(mfd), unix.TIOCGPTPEER, unix.O_RDWR|unix.O_NOCTTY|unix.O_CLOEXEC)
	if errno != 0 {
		master.Close()
		return nil, stdio, fail.New("open pseudo-terminal slave", "", errno)
	}
	p := &Relay{master: master, Slave: os.NewFile(sfd, "pty"), term: stdio.In, out: out, drained: make(chan struct{})}
	// The command starts with the caller's terminal settings and size.
	if t, err := unix.IoctlGetTermios(int(p.term.Fd()), unix.TCGETS); err == nil {
		unix.IoctlSetTermios(int(sfd), unix.TCSETS, t)
	}
	p.Resize()
	inner := Stdio{In: p.Slave, Out: stdio.Out, Err: stdio.Err}
	if IsTerminal(stdio.Out) {
		inner.Out = p.Slave
	}
	if IsTerminal(stdio.Err) {
		inner.Err = p.Slave
	}
	return p, inner, nil
}

// Attach relays master, the master of a pseudo-terminal a persistent sandbox's spawner made for
// a command (and sent back), to the caller's terminal as Open's relay does: the caller's
// keystrokes to it when input is set, its output to stdio.Out. master must be pollable
// (non-blocking), so that Drain can bound the wait for the last output.
func Attach(master *os.File, stdio Stdio, input bool) *Relay {
	p := &Relay{master: master, term: stdio.In, out: stdio.Out, drained: make(chan struct{}), noInput: !input}
	if IsTerminal(stdio.In) {
		p.Resize()
	}
	return p
}

// Drain waits for the command's output once it has ended: until every process holding the
// pseudo-terminal is gone, or no output came for quiet (processes it left running may hold it
// for good), and gives the caller its terminal back.
func (p *Relay) Drain(quiet time.Duration) {
	p.quiet.Store(int64(quiet))
	p.master.SetReadDeadline(time.Now().Add(quiet))
	<-p.drained
	p.master.Close()
	p.Restore()
}

// start puts the caller's terminal in raw mode (the pseudo-terminal does the line discipline and
// turns Ctrl-C into SIGINT for the command) and relays both ways.
func (p *Relay) Start() {
	fd := int(p.term.Fd())
	if t, err := unix.IoctlGetTermios(fd, unix.TCGETS); err == nil && !p.noInput {
		saved := *t
		p.saved = &saved
		makeRaw(t)
		unix.IoctlSetTermios(fd, unix.TCSETS, t)
	}
	go func() {
		if p.noInput {
			return
		}
		// Ends when the caller's terminal closes, or with jail: a read of the caller's terminal
		// cannot be interrupted without touching the file status it shares with the shell.
		io.Copy(p.master, p.term)
	}()
	go func() {
		// Ends with EIO once every slave descriptor is closed, or when draining and quiet.
		buf := make([]byte, 32<<10)
		for {
			n, err := p.master.Read(buf)
			if n > 0 {
				p.out.Write(buf[:n])
				if q := p.quiet.Load(); q > 0 {
					p.master.SetReadDeadline(time.Now().Add(time.Duration(q)))
				}
			}
			if err != nil {
				break
			}
		}
		close(p.drained)
	}()
}

// makeRaw is cfmakeraw(3).
func makeRaw(t *unix.Termios) {
	t.Iflag &^= unix.IGNBRK | unix.BRKINT | unix.PARMRK | unix.ISTRIP | unix.INLCR | unix.IGNCR | unix.ICRNL | unix.IXON
	t.Oflag &^= unix.OPOST
	t.Lflag &^= unix.ECHO | unix.ECHONL | unix.ICANON | unix.ISIG | unix.IEXTEN
	t.Cflag &^= unix.CSIZE | unix.PARENB
	t.Cflag |= unix.CS8
	t.Cc[unix.VMIN] = 1
	t.Cc[unix.VTIME] = 0
}

// resize copies the caller's window size to the pseudo-terminal; the kernel then sends SIGWINCH
// to the command's foreground process group.
func (p *Relay) Resize() {
	if ws, err := unix.IoctlGetWinsize(int(p.term.Fd()), unix.TIOCGWINSZ); err == nil {
		unix.IoctlSetWinsize(int(p.master.Fd()), unix.TIOCSWINSZ, ws)
	}
}

// followResizes resizes the pseudo-terminal on every SIGWINCH this process gets from now on.
func (p *Relay) FollowResizes() {
	winch := make(chan os.Signal, 1)
	signal.Notify(winch, syscall.SIGWINCH)
	go func() {
		for range winch {
			p.Resize()
		}
	}()
}

// finish waits for the command's last output and gives the caller its terminal back. Every
// process holding the pseudo-terminal is dead or killed by then (init has exited, or its setup
// killed what the command left), so the relay reaches the end of the output.
func (p *Relay) Finish() {
	if p == nil {
		return
	}
	<-p.drained
	p.master.Close()
	p.Restore()
}

// restore gives the caller's terminal its settings back.
func (p *Relay) Restore() {
	if p == nil || p.saved == nil {
		return
	}
	unix.IoctlSetTermios(int(p.term.Fd()), unix.TCSETS, p.saved)
}

// Stdio are the descriptors the command gets as 0, 1 and 2 (nil: /dev/null).
type Stdio struct{ In, Out, Err *os.File }
