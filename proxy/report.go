package proxy

import "sync"

// Report is what the proxy did for one sandbox, for jail's exit summary and --report.
type Report struct {
	// Denied are the refused destinations, in order of first refusal, with counts.
	Denied []Denial `json:"denied"`
	// Resolved are the names the proxy looked up on the host's resolver, in order of first
	// lookup. Under a wildcard allow entry the sandbox chooses them, and each lookup reaches
	// that domain's name servers: a channel out that carries whatever the names spell.
	Resolved []string `json:"resolved"`
	// ResolvedMore counts the lookups of names beyond the first maxResolved, not listed.
	ResolvedMore int `json:"resolved_more,omitempty"`
	Usage
}

// maxResolved bounds the names kept for the report.
const maxResolved = 1000

// resolved are the names a server looked up.
type resolved struct {
	mu    sync.Mutex
	names []string
	seen  map[string]bool
	more  int
}

func (r *resolved) note(name string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	switch {
	case r.seen[name]:
	case len(r.names) >= maxResolved:
		r.more++
	default:
		if r.seen == nil {
			r.seen = map[string]bool{}
		}
		r.seen[name] = true
		r.names = append(r.names, name)
	}
}

// Report returns what the server did so far.
func (s *Server) Report() Report {
	s.resolved.mu.Lock()
	names, more := append([]string{}, s.resolved.names...), s.resolved.more
	s.resolved.mu.Unlock()
	return Report{Denied: append([]Denial{}, s.Denials()...), Resolved: names, ResolvedMore: more, Usage: s.Usage()}
}
