package jail

import (
	"errors"
	"fmt"
	"os"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/jail-sandbox/jail/jail/internal/spawn"
)

// process is a child jail waits for: init, or the fallback's command. It is signalled through
// a pidfd, so that a signal sent as it is being reaped cannot reach a process reusing its pid,
// and its exit is awaited on the same pidfd (awaitExit says why).
type process struct {
	pid    int
	mu     sync.Mutex
	pidfd  *os.File      // non-blocking, in Go's poller; nil once reaped
	waiter *spawn.Waiter // reaps the process when it is the parent (spawn.Waiter); nil: jail does
	waited bool
	ws     syscall.WaitStatus
	ru     syscall.Rusage
}

// newProcess takes pid, a child not yet waited for.
func newProcess(pid int) (*process, error) {
	fd, err := unix.PidfdOpen(pid, unix.PIDFD_NONBLOCK)
	if err != nil {
		unix.Kill(pid, unix.SIGKILL)
		unix.Wait4(pid, nil, 0, nil)
		return nil, fmt.Errorf("pidfd_open: %w", err)
	}
	return &process{pid: pid, pidfd: os.NewFile(uintptr(fd), "pidfd")}, nil
}

// signal sends sig, unless the process was reaped.
func (p *process) signal(sig syscall.Signal) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.pidfd == nil {
		return
	}
	if rc, err := p.pidfd.SyscallConn(); err == nil {
		rc.Control(func(fd uintptr) { unix.PidfdSendSignal(int(fd), sig, nil, 0) })
	}
}

// wait reaps the process, or has its waiter reap it, recording its status and resource usage.
func (p *process) wait() error {
	var err error
	if p.waiter != nil {
		p.ws, p.ru, err = p.waiter.WaitInit()
	} else {
		p.awaitExit()
		for {
			if _, err = syscall.Wait4(p.pid, &p.ws, 0, &p.ru); !errors.Is(err, syscall.EINTR) {
				break
			}
		}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.pidfd.Close()
	p.pidfd = nil
	p.waited = err == nil
	return err
}

// awaitExit returns once the process has exited: its pidfd polls readable. It waits parked in
// Go's poller, not in wait4: a goroutine blocked in a syscall keeps one of the runtime's Ps, and
// while one does, the runtime's monitor thread wakes every 20 µs or so, for up to 10 ms into the
// command, instead of sleeping until there is work. wait4 then returns at once.
func (p *process) awaitExit() {
	rc, err := p.pidfd.SyscallConn()
	if err != nil {
		return // wait4 blocks instead
	}
	rc.Read(func(fd uintptr) bool {
		n, err := unix.Poll([]unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}, 0)
		return n != 0 || err != nil // exited, or let wait4 say
	})
}
