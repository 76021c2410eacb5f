package rundir

import (
	"encoding/json"
	"os"
	"path/filepath"
	"time"

	"github.com/jail-sandbox/jail/api"
)

// Record is what create records of a sandbox (sandbox.json): what it is and how long it may
// live. Only jail writes it, outside any sandbox.
type Record struct {
	ID          string            `json:"id"`
	Name        string            `json:"name,omitempty"`
	Profile     string            `json:"profile"`
	Workdir     string            `json:"workdir"`
	Cwd         string            `json:"cwd"`
	Grants      api.Grants        `json:"grants"`
	Workspace   string            `json:"workspace,omitempty"` // "overlay": the working directory's change set is the sandbox's
	Network     api.Network       `json:"network"`
	Timeout     api.Duration      `json:"timeout,omitempty"`
	Labels      map[string]string `json:"labels,omitempty"`
	CreatedAt   time.Time         `json:"created_at"`
	IdleTimeout api.Duration      `json:"idle_timeout,omitempty"`
	TTL         api.Duration      `json:"ttl,omitempty"`
	Deadline    *time.Time        `json:"deadline,omitempty"` // when the TTL runs out
}

// ReadRecord reads sandbox dir's record.
func ReadRecord(dir string) (*Record, error) {
	b, err := os.ReadFile(filepath.Join(dir, RecordFile))
	if err != nil {
		return nil, err
	}
	rec := &Record{}
	return rec, json.Unmarshal(b, rec)
}

// WriteJSON writes v as name in dir, whole or not at all (a temporary file renamed).
func WriteJSON(dir, name string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, "."+name+".*")
	if err != nil {
		return err
	}
	_, err = tmp.Write(append(b, '\n'))
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), filepath.Join(dir, name))
	}
	if err != nil {
		os.Remove(tmp.Name())
	}
	return err
}

// UpdateRecord changes sandbox dir's record with f, under the directory's lock.
func UpdateRecord(dir string, f func(*Record) error) (*Record, error) {
	unlock, err := lockDir(dir)
	if err != nil {
		return nil, err
	}
	defer unlock()
	rec, err := ReadRecord(dir)
	if err != nil {
		return nil, err
	}
	if err := f(rec); err != nil {
		return nil, err
	}
	return rec, WriteJSON(dir, RecordFile, rec)
}
