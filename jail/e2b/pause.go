package e2b

import (
	"maps"
	"net/http"
	"syscall"
	"time"

	"github.com/jail-sandbox/jail/api"
)

// A paused E2B sandbox is a jail sandbox whose processes are stopped — SIGSTOP to each process
// group E2B started, where E2B snapshots the VM — with no deadline and a label saying so, until
// connect continues them. Processes that left their group (setsid, daemons) keep running.

const labelPaused = labelPrefix + "paused" // when it was paused

func paused(sb *api.Sandbox) bool { return sb.Labels[labelPaused] != "" }

// POST /sandboxes/{id}/pause → 204; 409 when it is paused already.
func (s *Server) pause(w http.ResponseWriter, r *http.Request) {
	sb, err := s.sandbox(r.PathValue("id"))
	if err != nil {
		writeFailure(w, err)
		return
	}
	if paused(sb) {
		writeError(w, http.StatusConflict, "jail: sandbox "+sb.ID+" is paused already")
		return
	}
	labels := maps.Clone(sb.Labels)
	labels[labelPaused] = time.Now().UTC().Format(time.RFC3339)
	none := api.Duration(0)
	if _, err := s.Client.Patch(sb.ID, api.PatchRequest{TTL: &none, Labels: labels}); err != nil {
		writeFailure(w, err)
		return
	}
	if err := s.signalAll(sb.ID, syscall.SIGSTOP); err != nil {
		writeFailure(w, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// resume continues a paused sandbox's processes and gives it secs to live (nil: the default).
func (s *Server) resume(sb *api.Sandbox, secs *int64) error {
	if err := s.signalAll(sb.ID, syscall.SIGCONT); err != nil {
		return err
	}
	labels := maps.Clone(sb.Labels)
	delete(labels, labelPaused)
	ttl := api.Duration(DefaultTimeout)
	if secs != nil && *secs > 0 {
		ttl = api.Duration(time.Duration(*secs) * time.Second)
	}
	_, err := s.Client.Patch(sb.ID, api.PatchRequest{TTL: &ttl, Labels: labels})
	return err
}

// signalAll sends sig to the process group of every process E2B started in sandbox id.
func (s *Server) signalAll(id string, sig syscall.Signal) error {
	procs, err := s.Client.Processes(id, true)
	if err != nil {
		return err
	}
	for _, p := range procs {
		if !p.Background {
			continue // a file operation's helper, about to end
		}
		if err := s.Client.Signal(id, p.PID, sig); err != nil && api.AsError(err).Code != api.NotFound {
			return err
		}
	}
	return nil
}
