package client

import (
	"encoding/json"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/jail-sandbox/jail/api"
	"github.com/jail-sandbox/jail/jail/internal/rundir"
)

// view describes sandbox id from its directory: the record create wrote, whether its keeper
// holds the lock, when the lock was last touched (its last use) and why it ended, if it did.
func view(id, dir string) (*api.Sandbox, error) {
	rec, err := rundir.ReadRecord(dir)
	if err != nil {
		return nil, api.Errorf(api.NotFound, "sandbox %s: no record (%s)", id, err)
	}
	sb := &api.Sandbox{
		ID: rec.ID, Name: rec.Name, Profile: rec.Profile, Workdir: rec.Workdir, Cwd: rec.Cwd,
		Grants: rec.Grants, Workspace: rec.Workspace, Network: rec.Network, Timeout: rec.Timeout, Labels: rec.Labels,
		CreatedAt: rec.CreatedAt, IdleTimeout: rec.IdleTimeout, TTL: rec.TTL, State: api.StateDead,
	}
	if sb.Labels == nil {
		sb.Labels = map[string]string{}
	}
	var st syscall.Stat_t
	if syscall.Stat(filepath.Join(dir, rundir.Lock), &st) == nil {
		used := time.Unix(st.Mtim.Sec, st.Mtim.Nsec).UTC()
		sb.LastUsedAt = &used
	}
	switch {
	case rundir.Live(dir):
		sb.State = api.StateRunning
		sb.Socket = filepath.Join(dir, rundir.APISocket)
		sb.ExpiresAt = expiry(rec, sb.LastUsedAt)
	default:
		if b, err := os.ReadFile(filepath.Join(dir, rundir.EndedFile)); err == nil {
			sb.Ended = &api.Ended{}
			if json.Unmarshal(b, sb.Ended) == nil {
				sb.State = api.StateExited
			}
		}
	}
	return sb, nil
}

// expiry is when the keeper will remove the sandbox, if nothing uses it meanwhile: the earlier
// of its deadline and its last use plus the idle timeout.
func expiry(rec *rundir.Record, used *time.Time) *time.Time {
	var at *time.Time
	if rec.Deadline != nil {
		d := rec.Deadline.UTC()
		at = &d
	}
	if rec.IdleTimeout > 0 && used != nil {
		idle := used.Add(time.Duration(rec.IdleTimeout)).UTC()
		if at == nil || idle.Before(*at) {
			at = &idle
		}
	}
	return at
}
