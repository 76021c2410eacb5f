package jail

import (
	"sync"
	"time"

	"github.com/jail-sandbox/jail/jail/internal/spawn"
)

// shedAfter is how long a run goes on, or the egress proxy stays idle, before a host that stays
// for the run gives back the memory it no longer needs (spawn.Shed): a short run ends first, and
// the collection stays off the run's start and off the proxy's traffic.
const shedAfter = 100 * time.Millisecond

// shedder sheds the host's memory shedAfter from soon's last call. Its zero value is ready; it is
// safe for concurrent use (the egress proxy calls soon from its connections' goroutines).
type shedder struct {
	mu      sync.Mutex
	t       *time.Timer
	stopped bool
}

// soon sheds shedAfter from now, unless soon is called again before.
func (s *shedder) soon() {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.stopped:
	case s.t == nil:
		s.t = time.AfterFunc(shedAfter, spawn.Shed)
	default:
		s.t.Reset(shedAfter)
	}
}

// stop sheds no more: the run is over.
func (s *shedder) stop() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stopped = true
	if s.t != nil {
		s.t.Stop()
	}
}
