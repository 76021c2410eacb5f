package jail

import (
	"os"
	"os/signal"
)

// subscription catches the forwarded signals on C. The Go runtime enables each signal in a
// round trip with its signal-mask thread, about half a millisecond for the seven (more from a
// locked thread), so subscribing runs in the background, next to starting the sandbox, and is
// waited for only where it must hold: before the command can exist.
type subscription struct {
	C     chan os.Signal
	ready chan struct{}
	held  bool // uncaught: jail's waiter holds the signals
}

// subscribe starts catching forwardedSignals.
func subscribe() *subscription {
	s := &subscription{C: make(chan os.Signal, 16), ready: make(chan struct{})}
	go func() {
		signal.Notify(s.C, forwardedSignals...)
		close(s.ready)
	}()
	return s
}

// uncaught is a subscription that catches nothing, for a host whose signals jail's waiter holds
// and forwards to init itself (spawn.Waiter): it is ready at once, C never receives, and the runtime
// makes none of its round trips.
func uncaught() *subscription {
	s := &subscription{C: make(chan os.Signal), ready: make(chan struct{}), held: true}
	close(s.ready)
	return s
}

// caught returns s, or when s is uncaught a subscription catching the forwarded signals: for an
// init of this process's own, to which only it can forward them.
func (s *subscription) caught() *subscription {
	if !s.held {
		return s
	}
	return subscribe()
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
	}()
}
