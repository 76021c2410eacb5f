package proxy

import (
	"archive/zip"
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/http/cgi"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// startWithUpstreams starts a plain and a TLS hello server, allowed as allowed.test and
// secure.test, and a proxy for them.
func startWithUpstreams(t *testing.T) (tp *testProxy, port, tlsPort string) {
	_, port = upstream(t, hello)
	tlsUp := httptest.NewTLSServer(hello)
	t.Cleanup(tlsUp.Close)
	tlsPort = portOf(t, tlsUp.Listener.Addr())
	tp = startProxy(t, Policy{Allow: []string{"allowed.test:" + port, "secure.test:" + tlsPort}, AllowPrivate: true},
		map[string]string{"allowed.test": "127.0.0.1", "secure.test": "127.0.0.1"}, nil)
	return tp, port, tlsPort
}

// Real clients through the Forward port, as a command in the sandbox would use it.

func TestCurlForwardConnectSocks(t *testing.T) {
	tp, port, tlsPort := startWithUpstreams(t)
	proxyURL := "http://" + tp.addr
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"http forward", []string{"-x", proxyURL, "http://allowed.test:" + port + "/x"}, "hello from allowed.test:" + port},
		{"CONNECT tunnel", []string{"-p", "-x", proxyURL, "http://allowed.test:" + port + "/x"}, "hello from allowed.test:" + port},
		{"https via CONNECT", []string{"-k", "-x", proxyURL, "https://secure.test:" + tlsPort + "/"}, "hello from secure.test:" + tlsPort},
		{"socks5h", []string{"-x", "socks5h://" + tp.addr, "http://allowed.test:" + port + "/"}, "hello from allowed.test:" + port},
		{"socks5h https", []string{"-k", "-x", "socks5h://" + tp.addr, "https://secure.test:" + tlsPort + "/"}, "hello from secure.test:" + tlsPort},
	}
	for _, c := range cases {
		out, errOut, err := run(t, cleanEnv(), "curl", append([]string{"-sS", "--fail-with-body", "--max-time", "20"}, c.args...)...)
		if err != nil || out != c.want {
			t.Errorf("%s: curl %v: %v %q %q", c.name, c.args, err, out, errOut)
		}
	}
	if d := tp.srv.Denials(); len(d) != 0 {
		t.Errorf("unexpected denials %v", d)
	}
}

func TestCurlDenied(t *testing.T) {
	_, port := upstream(t, hello)
	tp := startProxy(t, Policy{Allow: []string{"allowed.test:" + port}, AllowPrivate: true},
		map[string]string{"allowed.test": "127.0.0.1", "denied.test": "127.0.0.1"}, nil)
	for range 2 {
		out, _, err := run(t, cleanEnv(), "curl", "-sS", "-w", "\n%{http_code}", "-x", "http://"+tp.addr, "http://denied.test/")
		if err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{"jail", "denied.test:80", `[network] allow = ["denied.test"]`, "--allow-host denied.test", "\n403"} {
			if !strings.Contains(out, want) {
				t.Errorf("403 answer %q lacks %q", out, want)
			}
		}
	}
	// CONNECT refused: curl reports the proxy's status.
	out, _, _ := run(t, cleanEnv(), "curl", "-sS", "-p", "-w", "%{http_connect}", "-x", "http://"+tp.addr, "http://denied.test:"+port+"/")
	if !strings.HasSuffix(out, "403") {
		t.Errorf("CONNECT to a denied host: %q", out)
	}
	// SOCKS5: refusal code 2 ("connection not allowed by ruleset").
	_, errOut, err := run(t, cleanEnv(), "curl", "-sS", "-x", "socks5h://"+tp.addr, "http://denied.test/")
	if err == nil || !strings.Contains(errOut, "denied.test. (2)") {
		t.Errorf("socks5h to a denied host: %v %q", err, errOut)
	}
	log := tp.log.String()
	if n := strings.Count(log, "denied denied.test:80"); n != 1 {
		t.Errorf("denial logged %d times, want once:\n%s", n, log)
	}
	d := tp.srv.Denials()
	if len(d) != 2 || d[0].Host != "denied.test" || d[0].Port != 80 || d[0].Count != 3 {
		t.Errorf("denials %+v", d)
	}
}

func TestPythonURLLib(t *testing.T) {
	tp, port, tlsPort := startWithUpstreams(t)
	script := `
import ssl, sys, urllib.request, urllib.error
ctx = ssl._create_unverified_context()
opener = urllib.request.build_opener(urllib.request.HTTPSHandler(context=ctx))  # proxies from the environment
for url in sys.argv[1:]:
    try:
        print(opener.open(url, timeout=20).read().decode())
    except urllib.error.HTTPError as e:
        print(e.code, e.read().decode().splitlines()[0])
`
	env := append(cleanEnv(), Env(tp.addr, tp.addr)...)
	out, errOut, err := run(t, env, "python3", "-c", script,
		"http://allowed.test:"+port+"/", "https://secure.test:"+tlsPort+"/", "http://nope.test/")
	if err != nil {
		t.Fatalf("python: %v %s", err, errOut)
	}
	want := "hello from allowed.test:" + port + "\nhello from secure.test:" + tlsPort + "\n403 jail: the sandbox's network policy blocked the connection to nope.test:80: it is not in the allow list.\n"
	if out != want {
		t.Errorf("python urllib:\n%s\nwant\n%s", out, want)
	}
}

func TestGitCloneOverHTTP(t *testing.T) {
	backend := "/usr/lib/git-core/git-http-backend"
	if _, err := os.Stat(backend); err != nil {
		t.Skip("git-http-backend not installed")
	}
	root := t.TempDir()
	repo := filepath.Join(root, "repo.git")
	work := filepath.Join(root, "work")
	gitEnv := []string{"GIT_CONFIG_NOSYSTEM=1", "HOME=" + root, "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t"}
	for _, args := range [][]string{
		{"init", "-q", "-b", "main", work},
		{"-C", work, "commit", "-q", "--allow-empty", "-m", "first"},
		{"clone", "-q", "--bare", work, repo},
	} {
		if out, err := gitCmd(gitEnv, args...); err != nil {
			t.Fatalf("git %v: %v %s", args, err, out)
		}
	}
	_, port := upstream(t, &cgi.Handler{Path: backend, Env: []string{"GIT_PROJECT_ROOT=" + root, "GIT_HTTP_EXPORT_ALL=1"}})
	tp := startProxy(t, Policy{Allow: []string{"git.test:" + port}, AllowPrivate: true}, map[string]string{"git.test": "127.0.0.1"}, nil)
	env := append(append(cleanEnv(), gitEnv...), Env(tp.addr, tp.addr)...)
	if out, err := gitCmd(env, "clone", "-q", "http://git.test:"+port+"/repo.git", filepath.Join(root, "clone")); err != nil {
		t.Fatalf("git clone through the proxy: %v %s", err, out)
	}
	if out, err := gitCmd(env, "-C", filepath.Join(root, "clone"), "log", "--format=%s"); err != nil || strings.TrimSpace(out) != "first" {
		t.Errorf("cloned repo: %v %q", err, out)
	}
	if out, err := gitCmd(env, "ls-remote", "http://other.test/repo.git"); err == nil || !strings.Contains(out, "403") {
		t.Errorf("git to a denied host: %v %s", err, out)
	}
}

func gitCmd(env []string, args ...string) (string, error) {
	cmd := exec.Command("git", args...)
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// TestPipDownload: pip fetches a package from an HTTPS index through the proxy (CONNECT), as it
// would from PyPI. pypi.test resolves only in the proxy, so pip cannot have gone around it.
func TestPipDownload(t *testing.T) {
	if out, err := exec.Command("python3", "-m", "pip", "--version").CombinedOutput(); err != nil {
		t.Skipf("no pip: %v %s", err, out)
	}
	wheel := demoWheel(t)
	index := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/simple/demo/":
			fmt.Fprint(w, `<html><body><a href="/files/demo-1.0-py3-none-any.whl">demo-1.0-py3-none-any.whl</a></body></html>`)
		case "/files/demo-1.0-py3-none-any.whl":
			_, _ = w.Write(wheel)
		default:
			http.NotFound(w, r)
		}
	}))
	defer index.Close()
	port := portOf(t, index.Listener.Addr())
	tp := startProxy(t, Policy{Allow: []string{"pypi.test:" + port}, AllowPrivate: true}, map[string]string{"pypi.test": "127.0.0.1"}, nil)
	dir := t.TempDir()
	env := append(append(cleanEnv(), "PIP_CONFIG_FILE=/dev/null", "HOME="+dir), Env(tp.addr, tp.addr)...)
	_, errOut, err := run(t, env, "python3", "-m", "pip", "download", "--no-deps", "--no-cache-dir",
		"--disable-pip-version-check", "--trusted-host", "pypi.test:"+port,
		"--index-url", "https://pypi.test:"+port+"/simple/", "-d", dir, "demo")
	if err != nil {
		t.Fatalf("pip download: %v\n%s", err, errOut)
	}
	if _, err := os.Stat(filepath.Join(dir, "demo-1.0-py3-none-any.whl")); err != nil {
		t.Errorf("wheel not downloaded: %v", err)
	}
}

// demoWheel builds the smallest wheel pip accepts.
func demoWheel(t *testing.T) []byte {
	var b bytes.Buffer
	zw := zip.NewWriter(&b)
	for name, body := range map[string]string{
		"demo/__init__.py":                 "",
		"demo-1.0.dist-info/METADATA":      "Metadata-Version: 2.1\nName: demo\nVersion: 1.0\n",
		"demo-1.0.dist-info/WHEEL":         "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
		"demo-1.0.dist-info/RECORD":        "",
		"demo-1.0.dist-info/top_level.txt": "demo\n",
	} {
		w, err := zw.Create(name)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.WriteString(w, body)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}
