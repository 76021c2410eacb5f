package jail

import (
	"os"
	"os/signal"
	"syscall"
)

// subscription catches the forwarded signals on C. The Go runtime enables each signal in a
// round trip with its signal-mask thread, about half a millisecond for the seven (more from a
// locked thread), so subscribing runs in the background, next to starting the sandbox, and is
// waited for only where it must hold: before the command can exist.
type subscription struct {
	C     chan os.Signal
	ended chan os.Signal // a reaper's SIGCHLD (subscribeReaper); nil otherwise
	ready chan struct{}
}

// subscribe starts catching forwardedSignals.
func subscribe() *subscription { return subscribeTo(nil) }

// subscribeReaper starts catching forwardedSignals, and SIGCHLD on ended. One SIGCHLD pending is
// enough: the reaper reaps every child that ended when it wakes.
func subscribeReaper() *subscription { return subscribeTo(make(chan os.Signal, 1)) }

func subscribeTo(ended chan os.Signal) *subscription {
	s := &subscription{C: make(chan os.Signal, 16), ended: ended, ready: make(chan struct{})}
	go func() {
		signal.Notify(s.C, forwardedSignals...)
		if ended != nil {
			signal.Notify(ended, syscall.SIGCHLD)
		}
		close(s.ready)
	}()
	return s
}

// wait returns once every signal is caught.
func (s *subscription) wait() { <-s.ready }

// stop stops catching the signals and then closes C, in the background: the caller is done
// with them and need not wait for the runtime's round trips.
func (s *subscription) stop() {
	go func() {
		<-s.ready
		signal.Stop(s.C)
		close(s.C)
		if s.ended != nil {
			signal.Stop(s.ended)
		}
	}()
}
