package e2b

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"regexp"
	"strings"

	"github.com/jail-sandbox/jail/api"
	"github.com/jail-sandbox/jail/jail/client"
)

// keyFormat is the form of an E2B API key; the Python SDK refuses any other before it sends it.
var keyFormat = regexp.MustCompile(`^e2b_[0-9a-f]+$`)

// LoadKey returns the API key file holds, first writing a new random one (mode 0600) when the
// file does not exist. A key file others may read, or one not in E2B's format, is refused.
func LoadKey(file string) (string, error) {
	b, err := os.ReadFile(file)
	if errors.Is(err, fs.ErrNotExist) {
		raw := make([]byte, 20)
		rand.Read(raw)
		key := "e2b_" + hex.EncodeToString(raw)
		f, err := os.OpenFile(file, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if err != nil {
			return "", fmt.Errorf("API key %s: %w", file, err)
		}
		if _, err := f.WriteString(key + "\n"); err != nil {
			f.Close()
			return "", fmt.Errorf("API key %s: %w", file, err)
		}
		return key, f.Close()
	}
	if err != nil {
		return "", fmt.Errorf("API key %s: %w", file, err)
	}
	if fi, err := os.Stat(file); err == nil && fi.Mode().Perm()&0o077 != 0 {
		return "", fmt.Errorf("API key %s: mode %#o lets others read it (chmod 600 %s)", file, fi.Mode().Perm(), file)
	}
	key := strings.TrimSpace(string(b))
	if !keyFormat.MatchString(key) {
		return "", fmt.Errorf("API key %s: not e2b_ and lowercase hex, which E2B's SDKs require (remove the file for a new key)", file)
	}
	return key, nil
}

// authorized says whether a control plane request carries the API key.
func (s *Server) authorized(r *http.Request) bool {
	return hmac.Equal([]byte(r.Header.Get("X-API-KEY")), []byte(s.Key))
}

// accessToken is sandbox id's envd access token: what the SDK got at create and sends to envd as
// X-Access-Token. Derived from the key, it needs no storage and holds across restarts.
func (s *Server) accessToken(id string) string {
	m := hmac.New(sha256.New, []byte(s.Key))
	m.Write([]byte("envd access token\x00" + id))
	return hex.EncodeToString(m.Sum(nil)[:20])
}

// envd checks an envd request — its access token, and that it names a live E2B sandbox — and
// serves it.
func (s *Server) envd(w http.ResponseWriter, r *http.Request) {
	id := r.Header.Get(sandboxHeader)
	if !hmac.Equal([]byte(r.Header.Get("X-Access-Token")), []byte(s.accessToken(id))) {
		writeError(w, http.StatusUnauthorized, "jail: sandbox "+id+": wrong or missing X-Access-Token (the envdAccessToken create answered)")
		return
	}
	// 502 is what E2B answers for a sandbox that is gone or paused; the SDKs take it as "not
	// running".
	sb, err := s.sandbox(id)
	if err != nil {
		writeError(w, http.StatusBadGateway, api.AsError(err).Message)
		return
	}
	if paused(sb) {
		writeError(w, http.StatusBadGateway, "jail: sandbox "+id+" is paused (Sandbox.connect resumes it)")
		return
	}
	s.envdMux.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), sandboxKey{}, id)))
}

// envdPath says whether path is one of envd's, which no route of the control plane shares.
func envdPath(path string) bool {
	return path == "/files" || strings.HasPrefix(path, "/process.Process/") || strings.HasPrefix(path, "/filesystem.Filesystem/")
}

// envdWithoutID serves an envd request that does not name its sandbox: some SDK versions send
// only the access token after a connect, which names one sandbox as well. Presigned file URLs
// (a signature, no token) are not supported.
func (s *Server) envdWithoutID(w http.ResponseWriter, r *http.Request) {
	token := r.Header.Get("X-Access-Token")
	if token == "" {
		msg := "jail: an envd request names no sandbox (E2b-Sandbox-Id) and has no access token"
		if r.URL.Query().Get("signature") != "" {
			msg = "jail: this E2B endpoint does not support presigned file URLs (uploadUrl, downloadUrl)"
		}
		writeError(w, http.StatusBadRequest, msg)
		return
	}
	sbs, err := s.Client.List(client.ListOptions{States: []string{api.StateRunning}})
	if err == nil {
		for _, sb := range sbs {
			if sb.Labels[labelTemplate] != "" && hmac.Equal([]byte(token), []byte(s.accessToken(sb.ID))) {
				r.Header.Set(sandboxHeader, sb.ID)
				s.envd(w, r)
				return
			}
		}
	}
	writeError(w, http.StatusUnauthorized, "jail: no running E2B sandbox has this X-Access-Token")
}

// Environment is what a client of the endpoint at url needs, as NAME=VALUE lines: both E2B
// URLs at the endpoint (envd requests then carry the sandbox's id in a header), the key, and
// E2B_DEBUG off (the SDKs in debug mode make no API calls at all).
func Environment(url, key string) string {
	return fmt.Sprintf("E2B_API_URL=%s\nE2B_SANDBOX_URL=%s\nE2B_API_KEY=%s\nE2B_DEBUG=false\n", url, url, key)
}
