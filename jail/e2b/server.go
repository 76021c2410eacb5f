// Package e2b serves the subset of E2B's protocol that E2B's SDKs speak, on jail's persistent
// sandboxes: the control plane (create, list, get, connect, set timeout, kill: REST and JSON)
// and the daemon each E2B sandbox runs, envd (processes and files: Connect-RPC, plus the HTTP
// file routes). Pointed at it with E2B_API_URL, E2B_SANDBOX_URL and E2B_API_KEY, an unmodified
// E2B SDK, and every framework's E2B provider built on one, runs its commands in jail sandboxes.
//
// It is a translator, not a sandbox of its own: every request becomes calls of package
// jail/client, the API `jail create`, `jail exec` and `jail serve` are built on. An E2B sandbox
// is a jail persistent sandbox (its E2B id is jail's), created from the profile its template
// maps to, with every layer that profile has. The endpoint keeps no state a restart would lose:
// an E2B sandbox's labels say which template made it, its metadata are its other labels, and
// its envd access token is derived from the API key and its id.
package e2b

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"

	"github.com/jail-sandbox/jail/jail/client"
	"github.com/jail-sandbox/jail/jail/e2b/envd/filesystem/filesystemconnect"
	"github.com/jail-sandbox/jail/jail/e2b/envd/process/processconnect"
)

// EnvdVersion is the envd version the endpoint reports. The SDKs gate features on it: 0.5.7
// has the stdin flag, the default user, CloseStdin and raw (octet-stream) uploads, and lacks
// file metadata and watch extras, which the SDKs then refuse before asking.
const EnvdVersion = "0.5.7"

// Home is the E2B sandbox user's home and the default working directory of its commands, and
// Workspace the directory some providers (OpenAI's) work in: both writable, private to each
// sandbox.
const (
	Home      = "/home/user"
	Workspace = "/workspace"
)

// Server answers E2B's control plane and envd on one HTTP handler.
type Server struct {
	Client *client.Client
	// Key is the API key clients send as X-API-KEY; envd access tokens derive from it.
	Key string
	// Templates maps E2B template names to jail profiles; any other name gets Default's.
	Templates Templates
	// Dir is the endpoint's own directory, where each sandbox's host working directory is made.
	Dir string

	procs   processTable
	once    sync.Once
	mux     *http.ServeMux
	envdMux *http.ServeMux
}

// ServeHTTP routes a request: envd's when it names a sandbox (E2b-Sandbox-Id, which the SDKs
// send to every envd route once E2B_SANDBOX_URL points all sandboxes at one address), else the
// control plane's.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.once.Do(s.routes)
	if r.Header.Get(sandboxHeader) != "" {
		s.envd(w, r)
		return
	}
	if envdPath(r.URL.Path) {
		s.envdWithoutID(w, r)
		return
	}
	if !s.authorized(r) {
		writeError(w, http.StatusUnauthorized, "jail: this E2B endpoint needs its API key in X-API-KEY (E2B_API_KEY; jail serve --e2b prints it)")
		return
	}
	s.mux.ServeHTTP(w, r)
}

// routes builds the control plane's routes. Both the routes of e2b 2.51 (/v2/…) and those of
// older SDKs and the Python one are served.
func (s *Server) routes() {
	m := http.NewServeMux()
	m.HandleFunc("POST /sandboxes", s.create)
	m.HandleFunc("POST /v2/sandboxes", s.create)
	m.HandleFunc("GET /sandboxes", s.list)
	m.HandleFunc("GET /v2/sandboxes", s.list)
	m.HandleFunc("GET /sandboxes/{id}", s.get)
	m.HandleFunc("POST /sandboxes/{id}/connect", s.connect)
	m.HandleFunc("POST /v2/sandboxes/{id}/connect", s.connect)
	m.HandleFunc("POST /sandboxes/{id}/resume", s.connect)
	m.HandleFunc("POST /sandboxes/{id}/timeout", s.setTimeout)
	m.HandleFunc("DELETE /sandboxes/{id}", s.kill)
	m.HandleFunc("POST /sandboxes/{id}/pause", s.pause)
	m.HandleFunc("GET /templates/aliases/{alias}", s.alias)
	templates := unsupported("building templates: a template runs on a jail profile (jail serve --e2b-template NAME=PROFILE)")
	volumes := unsupported("volumes: grant host directories with the template's profile")
	m.HandleFunc("/sandboxes/{id}/metrics", unsupported("sandbox metrics"))
	m.HandleFunc("/sandboxes/{id}/logs", unsupported("sandbox logs"))
	m.HandleFunc("/v2/sandboxes/{id}/logs", unsupported("sandbox logs"))
	m.HandleFunc("/sandboxes/{id}/fork", unsupported("forking a sandbox"))
	m.HandleFunc("/sandboxes/{id}/snapshots", unsupported("snapshots"))
	m.HandleFunc("/snapshots", unsupported("snapshots"))
	m.HandleFunc("/sandboxes/{id}/network", unsupported("changing a sandbox's network: its policy is fixed at create"))
	m.HandleFunc("/templates", templates)
	m.HandleFunc("/templates/", templates)
	m.HandleFunc("/v2/templates/", templates)
	m.HandleFunc("/v3/templates", templates)
	m.HandleFunc("/volumes", volumes)
	m.HandleFunc("/volumes/", volumes)
	m.HandleFunc("GET /health", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusOK) })
	m.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusNotFound, "jail: this E2B endpoint does not implement "+r.Method+" "+r.URL.Path+" (docs/e2b.md lists what it does)")
	})
	s.mux = m
	s.envdMux = s.envdRoutes()
}

// envdRoutes builds envd's routes: the two Connect-RPC services and the HTTP file routes.
func (s *Server) envdRoutes() *http.ServeMux {
	m := http.NewServeMux()
	m.Handle(processconnect.NewProcessHandler(&processService{s: s}))
	m.Handle(filesystemconnect.NewFilesystemHandler(&filesystemService{s: s}))
	m.HandleFunc("GET /files", s.download)
	m.HandleFunc("POST /files", s.upload)
	m.HandleFunc("GET /health", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNoContent) })
	m.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusNotFound, "jail: this E2B endpoint's envd does not implement "+r.Method+" "+r.URL.Path)
	})
	return m
}

// sandboxHeader names the sandbox an envd request is for.
const sandboxHeader = "E2b-Sandbox-Id"

type sandboxKey struct{}

// sandboxOf returns the id of the sandbox an envd request was checked for (envd).
func sandboxOf(ctx context.Context) string {
	id, _ := ctx.Value(sandboxKey{}).(string)
	return id
}

// resolvePath makes a path the SDK sent absolute: relative paths are from the user's home,
// as envd takes them.
func resolvePath(p string) string {
	if p == "" {
		return Home
	}
	if strings.HasPrefix(p, "/") {
		return p
	}
	return Home + "/" + strings.TrimPrefix(p, "./")
}

// CheckLoopback refuses an address to listen on that is not on loopback: the endpoint runs
// commands for whoever holds its key, and the key travels in clear text.
func CheckLoopback(addr string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("serve --e2b %s: %w (want 127.0.0.1:PORT)", addr, err)
	}
	if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return fmt.Errorf("serve --e2b %s: the E2B endpoint listens on loopback only (127.0.0.1:PORT, [::1]:PORT or localhost:PORT)", addr)
	}
	return nil
}
