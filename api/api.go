// Package api is the schema of jail's local API for persistent sandboxes (docs/api.md): the
// JSON bodies of its routes, its stream events and its errors. The HTTP server
// (jail/server), the Go client (jail/client) and the command line all speak these types.
package api

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Version is the answer of GET /v1/version.
type Version struct {
	Version string `json:"version"`
	API     int    `json:"api"`
}

// APIVersion is the number of this API; a change that breaks a client bumps it.
const APIVersion = 1

// Duration is a time.Duration that JSON carries as Go's duration text ("90s", "1h30m").
type Duration time.Duration

func (d Duration) MarshalJSON() ([]byte, error) {
	return json.Marshal(time.Duration(d).String())
}

func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("a duration is a string such as \"90s\" or \"15m\": %w", err)
	}
	v, err := ParseDuration(s)
	*d = Duration(v)
	return err
}

// ParseDuration parses a Go duration that must not be negative; "" is zero.
func ParseDuration(s string) (time.Duration, error) {
	if s == "" {
		return 0, nil
	}
	v, err := time.ParseDuration(s)
	if err == nil && v < 0 {
		err = fmt.Errorf("duration %q is negative", s)
	}
	return v, err
}

// Grants are filesystem grants, as the profile's [filesystem] keys name them.
type Grants struct {
	Read  []string `json:"read,omitempty"`
	Write []string `json:"write,omitempty"`
	Hide  []string `json:"hide,omitempty"`
	Tmpfs []string `json:"tmpfs,omitempty"`
}

// Network is a sandbox's network grant.
type Network struct {
	Mode         string   `json:"mode,omitempty"` // none, host or proxy
	AllowHosts   []string `json:"allow_hosts,omitempty"`
	AllowPrivate bool     `json:"allow_private,omitempty"`
}

// CreateRequest is the body of POST /v1/sandboxes: each field one flag of `jail create`.
type CreateRequest struct {
	Name        string            `json:"name,omitempty"`
	Profile     string            `json:"profile,omitempty"`
	Workdir     string            `json:"workdir"`
	Cwd         string            `json:"cwd,omitempty"`
	Grants      Grants            `json:"grants"`
	Network     Network           `json:"network"`
	Env         map[string]string `json:"env,omitempty"`
	Cache       []string          `json:"cache,omitempty"`
	Timeout     Duration          `json:"timeout,omitempty"`
	Labels      map[string]string `json:"labels,omitempty"`
	IdleTimeout Duration          `json:"idle_timeout,omitempty"`
	TTL         Duration          `json:"ttl,omitempty"`
	Workspace   string            `json:"workspace,omitempty"`
}

// ChangeSet is a sandbox's overlay workspace's change set (GET /v1/sandboxes/{id}/changes):
// what its commands wrote, waiting to be applied to the tree (docs/workspace.md).
type ChangeSet struct {
	ID        string     `json:"id"`
	Tree      string     `json:"tree"`
	Live      bool       `json:"live"` // the sandbox lives, its commands writing here
	Changes   []Change   `json:"changes"`
	Conflicts []Conflict `json:"conflicts"`
}

// Change is one path's change, with git status --short's letter: A, M, D, R (renamed from From)
// or T (type changed).
type Change struct {
	Status string `json:"status"`
	Path   string `json:"path"`
	From   string `json:"from,omitempty"`
}

// Conflict is a change whose path the tree changed since the sandbox was created.
type Conflict struct {
	Path   string `json:"path"`
	Reason string `json:"reason"`
}

// Refusal is a change apply refuses unless allow names its class.
type Refusal struct {
	Path   string `json:"path"`
	Reason string `json:"reason"`
	Allow  string `json:"allow"`
}

// ApplyRequest is POST /v1/sandboxes/{id}/changes/apply's body: the paths to apply (relative to
// the tree, or absolute inside it; none: all), the refused classes to take anyway (git,
// protected, autorun, links, special) and whether to overwrite conflicts.
type ApplyRequest struct {
	Paths     []string `json:"paths,omitempty"`
	Allow     []string `json:"allow,omitempty"`
	Overwrite bool     `json:"overwrite,omitempty"`
}

// ApplyResponse says what apply wrote; or, with Error set (failed_precondition), why it wrote
// nothing: the refusals and conflicts.
type ApplyResponse struct {
	Written   []Change   `json:"written"`
	Refused   []Refusal  `json:"refused,omitempty"`
	Conflicts []Conflict `json:"conflicts,omitempty"`
	Removed   bool       `json:"removed"` // applied in full after the sandbox's end: the change set is gone
	Error     *Error     `json:"error,omitempty"`
}

// Sandbox states.
const (
	StateRunning = "running" // its keeper and spawner run
	StateExited  = "exited"  // it ended by itself; the record stays until delete or prune
	StateDead    = "dead"    // its keeper is gone
)

// Sandbox is a sandbox as GET /v1/sandboxes/{id} describes it.
type Sandbox struct {
	ID          string            `json:"id"`
	Name        string            `json:"name,omitempty"`
	State       string            `json:"state"`
	Profile     string            `json:"profile"`
	Workdir     string            `json:"workdir"`
	Cwd         string            `json:"cwd"`
	Grants      Grants            `json:"grants"`
	Workspace   string            `json:"workspace,omitempty"`
	Network     Network           `json:"network"`
	Timeout     Duration          `json:"timeout,omitempty"`
	Labels      map[string]string `json:"labels"`
	CreatedAt   time.Time         `json:"created_at"`
	LastUsedAt  *time.Time        `json:"last_used_at,omitempty"`
	IdleTimeout Duration          `json:"idle_timeout,omitempty"`
	TTL         Duration          `json:"ttl,omitempty"`
	ExpiresAt   *time.Time        `json:"expires_at,omitempty"`
	Socket      string            `json:"socket,omitempty"`
	Ended       *Ended            `json:"ended,omitempty"`
	Processes   []Process         `json:"processes,omitempty"`
}

// Ended says when and why a sandbox ended by itself.
type Ended struct {
	At     time.Time `json:"at"`
	Reason string    `json:"reason"`
	Status int       `json:"status"`
}

// ListResponse is the answer of GET /v1/sandboxes.
type ListResponse struct {
	Sandboxes  []Sandbox `json:"sandboxes"`
	NextCursor *string   `json:"next_cursor"`
}

// PatchRequest is the body of PATCH /v1/sandboxes/{id}: nil fields stay as they are.
type PatchRequest struct {
	TTL         *Duration         `json:"ttl,omitempty"`
	IdleTimeout *Duration         `json:"idle_timeout,omitempty"`
	Labels      map[string]string `json:"labels,omitempty"`
}

// PruneResponse is the answer of POST /v1/prune.
type PruneResponse struct {
	Removed []string `json:"removed"`
}

// ExecRequest is the body of POST …/exec and POST …/processes.
type ExecRequest struct {
	Cmd         []string          `json:"cmd,omitempty"`
	Shell       *string           `json:"shell,omitempty"`
	Cwd         string            `json:"cwd,omitempty"`
	Env         map[string]string `json:"env,omitempty"`
	Timeout     *Duration         `json:"timeout,omitempty"`
	Stdin       string            `json:"stdin,omitempty"` // StdinIgnore (default) or StdinPipe
	Input       []byte            `json:"input,omitempty"`
	TTY         *TTYSize          `json:"tty,omitempty"`
	MergeOutput bool              `json:"merge_output,omitempty"`
}

// Stdin modes of ExecRequest.
const (
	StdinIgnore = "ignore"
	StdinPipe   = "pipe"
)

// Argv returns the command the request runs: Cmd, or Shell as /bin/sh -c.
func (r *ExecRequest) Argv() ([]string, error) {
	switch {
	case r.Shell != nil && len(r.Cmd) > 0:
		return nil, Errorf(InvalidArgument, "give cmd or shell, not both")
	case r.Shell != nil:
		return []string{"/bin/sh", "-c", *r.Shell}, nil
	case len(r.Cmd) == 0:
		return nil, Errorf(InvalidArgument, "no command: give cmd (argv) or shell (a string)")
	}
	return r.Cmd, nil
}

// TTYSize is a pseudo-terminal's size.
type TTYSize struct {
	Cols uint16 `json:"cols"`
	Rows uint16 `json:"rows"`
}

// Exit is how a command ended.
type Exit struct {
	ExitCode int     `json:"exit_code"`
	Signal   *string `json:"signal"`
	TimedOut bool    `json:"timed_out"`
}

// Process is a process record.
type Process struct {
	PID         int        `json:"pid"`
	Cmd         []string   `json:"cmd"`
	Cwd         string     `json:"cwd,omitempty"`
	Background  bool       `json:"background"`
	TTY         bool       `json:"tty"`
	Stdin       string     `json:"stdin"` // StdinPipe while a pipe is open, else StdinIgnore
	Running     bool       `json:"running"`
	ExitCode    *int       `json:"exit_code"`
	Signal      *string    `json:"signal"`
	TimedOut    bool       `json:"timed_out"`
	StartedAt   time.Time  `json:"started_at"`
	EndedAt     *time.Time `json:"ended_at"`
	StdoutBytes *int64     `json:"stdout_bytes,omitempty"`
	StderrBytes *int64     `json:"stderr_bytes,omitempty"`
}

// ProcessList is the answer of GET …/processes.
type ProcessList struct {
	Processes []Process `json:"processes"`
}

// Output is the answer of GET …/processes/{pid}/output.
type Output struct {
	Stdout        []byte `json:"stdout"`
	Stderr        []byte `json:"stderr"`
	NextStdout    int64  `json:"next_stdout"`
	NextStderr    int64  `json:"next_stderr"`
	StdoutDropped int64  `json:"stdout_dropped"`
	StderrDropped int64  `json:"stderr_dropped"`
	Running       bool   `json:"running"`
	Exit          *Exit  `json:"exit"`
}

// SignalRequest is the body of POST …/signal: a signal's name or number.
type SignalRequest struct {
	Signal SignalName `json:"signal"`
}

// SignalName is a signal, named ("TERM", "SIGTERM") or numbered in JSON.
type SignalName syscall.Signal

var signalNames = map[string]syscall.Signal{
	"HUP": syscall.SIGHUP, "INT": syscall.SIGINT, "QUIT": syscall.SIGQUIT, "KILL": syscall.SIGKILL,
	"USR1": syscall.SIGUSR1, "USR2": syscall.SIGUSR2, "PIPE": syscall.SIGPIPE, "ALRM": syscall.SIGALRM,
	"TERM": syscall.SIGTERM, "CONT": syscall.SIGCONT, "STOP": syscall.SIGSTOP, "TSTP": syscall.SIGTSTP,
	"WINCH": syscall.SIGWINCH,
}

func (s *SignalName) UnmarshalJSON(b []byte) error {
	var n int
	if json.Unmarshal(b, &n) == nil {
		if n <= 0 || n >= 65 {
			return fmt.Errorf("signal %d out of range", n)
		}
		*s = SignalName(n)
		return nil
	}
	var name string
	if err := json.Unmarshal(b, &name); err != nil {
		return err
	}
	sig, ok := signalNames[strings.TrimPrefix(strings.ToUpper(name), "SIG")]
	if !ok {
		return fmt.Errorf("unknown signal %q", name)
	}
	*s = SignalName(sig)
	return nil
}

func (s SignalName) MarshalJSON() ([]byte, error) {
	return json.Marshal(SignalText(syscall.Signal(s)))
}

// SignalText names a signal as this API does ("KILL"), or its number when it has no name here.
func SignalText(sig syscall.Signal) string {
	for name, s := range signalNames {
		if s == sig {
			return name
		}
	}
	return strconv.Itoa(int(sig))
}

// ResizeRequest is the body of POST …/resize.
type ResizeRequest = TTYSize

// FileEntry describes a file inside a sandbox.
type FileEntry struct {
	Name          string    `json:"name"`
	Path          string    `json:"path"`
	Type          string    `json:"type"` // file, dir, symlink or other
	Size          int64     `json:"size"`
	Mode          string    `json:"mode"`
	MTime         time.Time `json:"mtime"`
	SymlinkTarget string    `json:"symlink_target,omitempty"`
}

// FileList is the answer of GET …/fs/list.
type FileList struct {
	Entries []FileEntry `json:"entries"`
}

// WriteFileResponse is the answer of PUT …/fs/file.
type WriteFileResponse struct {
	Path string `json:"path"`
	Size int64  `json:"size"`
}

// MkdirRequest is the body of POST …/fs/mkdir.
type MkdirRequest struct {
	Path    string `json:"path"`
	Parents bool   `json:"parents,omitempty"`
	Mode    string `json:"mode,omitempty"`
}

// MoveRequest is the body of POST …/fs/move.
type MoveRequest struct {
	From string `json:"from"`
	To   string `json:"to"`
}

// RemoveRequest is the body of POST …/fs/remove.
type RemoveRequest struct {
	Path      string `json:"path"`
	Recursive bool   `json:"recursive,omitempty"`
	MissingOK bool   `json:"missing_ok,omitempty"`
}

// ArchiveResult is the answer of PUT …/fs/archive.
type ArchiveResult struct {
	Files int   `json:"files"`
	Bytes int64 `json:"bytes"`
}
