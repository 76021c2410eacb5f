package e2b

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/jail-sandbox/jail/api"
	"github.com/jail-sandbox/jail/jail/client"
)

// The control plane: E2B's REST API, each route one or two calls of package client.

// sandboxJSON is E2B's Sandbox, the answer of create and connect.
type sandboxJSON struct {
	SandboxID       string  `json:"sandboxID"`
	TemplateID      string  `json:"templateID"`
	Alias           string  `json:"alias,omitempty"`
	ClientID        string  `json:"clientID"`
	EnvdVersion     string  `json:"envdVersion"`
	EnvdAccessToken string  `json:"envdAccessToken"`
	Domain          *string `json:"domain"`
}

// listedJSON is E2B's ListedSandbox; with the fields after Metadata, its SandboxDetail.
type listedJSON struct {
	SandboxID   string            `json:"sandboxID"`
	TemplateID  string            `json:"templateID"`
	Alias       string            `json:"alias,omitempty"`
	ClientID    string            `json:"clientID"`
	CPUCount    int               `json:"cpuCount"`
	MemoryMB    int               `json:"memoryMB"`
	DiskSizeMB  int               `json:"diskSizeMB"`
	EnvdVersion string            `json:"envdVersion"`
	StartedAt   time.Time         `json:"startedAt"`
	EndAt       time.Time         `json:"endAt"`
	State       string            `json:"state"`
	Metadata    map[string]string `json:"metadata"`

	EnvdAccessToken string          `json:"envdAccessToken,omitempty"`
	Lifecycle       *lifecycleJSON  `json:"lifecycle,omitempty"`
	Domain          json.RawMessage `json:"domain,omitempty"`
}

type lifecycleJSON struct {
	OnTimeout  string `json:"onTimeout"`
	AutoResume bool   `json:"autoResume"`
}

// clientID is what E2B calls the host a sandbox runs on.
const clientID = "jail"

func (s *Server) created(sb *api.Sandbox) sandboxJSON {
	return sandboxJSON{
		SandboxID: sb.ID, TemplateID: sb.Labels[labelTemplate], Alias: sb.Labels[labelTemplate],
		ClientID: clientID, EnvdVersion: EnvdVersion, EnvdAccessToken: s.accessToken(sb.ID),
	}
}

func listed(sb *api.Sandbox) listedJSON {
	l := listedJSON{
		SandboxID: sb.ID, TemplateID: sb.Labels[labelTemplate], Alias: sb.Labels[labelTemplate],
		ClientID: clientID, CPUCount: runtime.NumCPU(), EnvdVersion: EnvdVersion,
		StartedAt: sb.CreatedAt, State: "running", Metadata: map[string]string{},
	}
	if paused(sb) {
		l.State = "paused"
	}
	if sb.ExpiresAt != nil {
		l.EndAt = *sb.ExpiresAt
	}
	for k, v := range sb.Labels {
		if !strings.HasPrefix(k, labelPrefix) {
			l.Metadata[k] = v
		}
	}
	return l
}

// sandbox returns the E2B sandbox id names, or not_found when there is no such sandbox, it does
// not run, or it is a jail sandbox that E2B did not create.
func (s *Server) sandbox(id string) (*api.Sandbox, error) {
	sb, err := client.View(id)
	if err != nil || sb.ID != id || sb.Labels[labelTemplate] == "" || sb.State != api.StateRunning {
		return nil, api.Errorf(api.NotFound, "sandbox %s: no such running E2B sandbox", id)
	}
	return sb, nil
}

// POST /sandboxes, POST /v2/sandboxes → 201 Sandbox.
func (s *Server) create(w http.ResponseWriter, r *http.Request) {
	var in newSandbox
	if err := json.NewDecoder(r.Body).Decode(&in); err != nil {
		writeError(w, http.StatusBadRequest, "jail: create: the body is not E2B's NewSandbox: "+err.Error())
		return
	}
	s.sweep()
	workdir, err := s.newWorkdir()
	if err != nil {
		writeFailure(w, err)
		return
	}
	req, err := s.createRequest(in, workdir)
	var sb *api.Sandbox
	if err == nil {
		sb, err = s.Client.Create(r.Context(), req)
	}
	if err != nil {
		os.RemoveAll(workdir)
		writeFailure(w, err)
		return
	}
	writeJSON(w, http.StatusCreated, s.created(sb))
}

// GET /sandboxes, GET /v2/sandboxes → 200 ListedSandbox[]: every running E2B sandbox whose
// metadata has every pair the metadata filter names. All come in one page (no X-Next-Token).
func (s *Server) list(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	states := "running,paused"
	if st := q.Get("state"); st != "" {
		states = st
	}
	filter, err := metadataFilter(q.Get("metadata"))
	if err != nil {
		writeError(w, http.StatusBadRequest, "jail: list: metadata filter: "+err.Error())
		return
	}
	sbs, err := s.Client.List(client.ListOptions{Labels: filter, States: []string{api.StateRunning}})
	if err != nil {
		writeFailure(w, err)
		return
	}
	out := []listedJSON{}
	for i := range sbs {
		if l := listed(&sbs[i]); l.TemplateID != "" && strings.Contains(","+states+",", ","+l.State+",") {
			out = append(out, l)
		}
	}
	writeJSON(w, http.StatusOK, out)
}

// metadataFilter decodes list's metadata parameter: a query string of its own (key=value&…),
// whose keys and values the JavaScript SDK encodes once more (encodeURIComponent).
func metadataFilter(param string) (map[string]string, error) {
	if param == "" {
		return nil, nil
	}
	pairs, err := url.ParseQuery(param)
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for k, vs := range pairs {
		out[unescape(k)] = unescape(vs[len(vs)-1])
	}
	return out, nil
}

func unescape(s string) string {
	if u, err := url.PathUnescape(s); err == nil {
		return u
	}
	return s
}

// GET /sandboxes/{id} → 200 SandboxDetail.
func (s *Server) get(w http.ResponseWriter, r *http.Request) {
	sb, err := s.sandbox(r.PathValue("id"))
	if err != nil {
		writeFailure(w, err)
		return
	}
	d := listed(sb)
	d.EnvdAccessToken = s.accessToken(sb.ID)
	d.Lifecycle = &lifecycleJSON{OnTimeout: "kill"}
	d.Domain = json.RawMessage("null")
	writeJSON(w, http.StatusOK, d)
}

// seconds is the body of set timeout and connect: {"timeout": seconds}.
type seconds struct {
	Timeout *int64 `json:"timeout"`
}

func readSeconds(r *http.Request) (seconds, error) {
	var in seconds
	err := json.NewDecoder(r.Body).Decode(&in)
	if errors.Is(err, io.EOF) {
		err = nil // no body: no timeout
	}
	if err == nil && in.Timeout != nil && *in.Timeout < 0 {
		err = errors.New("timeout is a number of seconds, not negative")
	}
	return in, err
}

// POST /sandboxes/{id}/connect, POST /v2/sandboxes/{id}/connect → 200 Sandbox, or 201 when it
// resumed a paused one. A running sandbox's timeout is only ever extended by connect.
func (s *Server) connect(w http.ResponseWriter, r *http.Request) {
	sb, err := s.sandbox(r.PathValue("id"))
	if err != nil {
		writeFailure(w, err)
		return
	}
	in, err := readSeconds(r)
	if err != nil {
		writeError(w, http.StatusBadRequest, "jail: connect: "+err.Error())
		return
	}
	if paused(sb) {
		if err := s.resume(sb, in.Timeout); err != nil {
			writeFailure(w, err)
			return
		}
		writeJSON(w, http.StatusCreated, s.created(sb))
		return
	}
	if in.Timeout != nil {
		until := time.Now().Add(time.Duration(*in.Timeout) * time.Second)
		if sb.ExpiresAt != nil && until.After(*sb.ExpiresAt) {
			if err := s.setTTL(sb.ID, *in.Timeout); err != nil {
				writeFailure(w, err)
				return
			}
		}
	}
	writeJSON(w, http.StatusOK, s.created(sb))
}

// POST /sandboxes/{id}/timeout {"timeout": seconds} → 204: the sandbox ends that long from now.
func (s *Server) setTimeout(w http.ResponseWriter, r *http.Request) {
	sb, err := s.sandbox(r.PathValue("id"))
	if err != nil {
		writeFailure(w, err)
		return
	}
	in, err := readSeconds(r)
	if err == nil && (in.Timeout == nil || *in.Timeout == 0) {
		err = errors.New("timeout: a positive number of seconds is required")
	}
	if err != nil {
		writeError(w, http.StatusBadRequest, "jail: set timeout: "+err.Error())
		return
	}
	if err := s.setTTL(sb.ID, *in.Timeout); err != nil {
		writeFailure(w, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func (s *Server) setTTL(id string, secs int64) error {
	ttl := api.Duration(time.Duration(secs) * time.Second)
	_, err := s.Client.Patch(id, api.PatchRequest{TTL: &ttl})
	return err
}

// DELETE /sandboxes/{id} → 204: the sandbox, its processes and its working directory are gone.
func (s *Server) kill(w http.ResponseWriter, r *http.Request) {
	sb, err := s.sandbox(r.PathValue("id"))
	if err != nil {
		writeFailure(w, err)
		return
	}
	if err := s.Client.Delete(sb.ID, true); err != nil {
		writeFailure(w, err)
		return
	}
	s.procs.forget(sb.ID)
	s.removeWorkdir(sb.Workdir)
	w.WriteHeader(http.StatusNoContent)
}

// GET /templates/aliases/{alias} → 200: every template name runs (on its profile, or base's),
// so a provider that checks for its template before building it (Mastra) finds it.
func (s *Server) alias(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, map[string]any{"templateID": r.PathValue("alias"), "public": false})
}

// unsupported answers a route jail knows but does not offer.
func unsupported(what string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusNotImplemented, "jail: this E2B endpoint does not support "+what)
	}
}

// Each E2B sandbox's host working directory is made in Dir/sandboxes: it is the directory the
// profile's $CWD grants (its files are not the E2B user's home, which is private to the
// sandbox), and goes with the sandbox.

func (s *Server) workdirs() string { return filepath.Join(s.Dir, "sandboxes") }

func (s *Server) newWorkdir() (string, error) {
	if err := os.MkdirAll(s.workdirs(), 0o700); err != nil {
		return "", api.Errorf(api.Internal, "create: %s", err)
	}
	dir, err := os.MkdirTemp(s.workdirs(), "sb-")
	if err != nil {
		return "", api.Errorf(api.Internal, "create: %s", err)
	}
	return dir, nil
}

// removeWorkdir removes a sandbox's working directory, only if it is one the endpoint made.
func (s *Server) removeWorkdir(dir string) {
	if filepath.Dir(dir) == s.workdirs() && strings.HasPrefix(filepath.Base(dir), "sb-") {
		os.RemoveAll(dir)
	}
}

// sweep removes the working directories of sandboxes that ended without a kill (their timeout
// ended them), leaving those a create may be making now.
func (s *Server) sweep() {
	entries, err := os.ReadDir(s.workdirs())
	if err != nil {
		return
	}
	sbs, err := s.Client.List(client.ListOptions{})
	if err != nil {
		return
	}
	used := map[string]bool{}
	for _, sb := range sbs {
		used[sb.Workdir] = true
	}
	for _, e := range entries {
		dir := filepath.Join(s.workdirs(), e.Name())
		if info, err := e.Info(); err == nil && !used[dir] && time.Since(info.ModTime()) > 5*time.Minute {
			s.removeWorkdir(dir)
		}
	}
}
