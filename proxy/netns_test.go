package proxy

import (
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"

	"github.com/jail-sandbox/jail/internal/testutil"
)

// The test binary doubles as a sandbox init: started in new user and network namespaces with
// netnsChildEnv set, it brings lo up, serves the proxy ports like jail's init, and runs a shell
// script with the proxy environment.
const netnsChildEnv = "JAIL_PROXY_NETNS_CHILD"

func TestMain(m *testing.M) {
	if os.Getenv(netnsChildEnv) != "" {
		os.Exit(netnsChild())
	}
	os.Exit(m.Run())
}

func netnsChild() int {
	if out, err := exec.Command("ip", "link", "set", "lo", "up").CombinedOutput(); err != nil {
		os.Stderr.Write(out)
		return 125
	}
	if err := ListenAndPass(os.NewFile(3, "egress proxy"), HTTPPort, SOCKSPort); err != nil {
		os.Stderr.WriteString(err.Error() + "\n")
		return 125
	}
	cmd := exec.Command("sh", "-c", os.Getenv("JAIL_PROXY_SCRIPT"))
	cmd.Env = append(os.Environ(), SandboxEnv()...)
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	if err := cmd.Run(); err != nil {
		return 1
	}
	return 0
}

// TestFromAnotherNetworkNamespace runs clients in their own network namespace with only lo,
// as in a sandbox: through the proxy ports they reach an allowed host on the host's loopback;
// directly they reach nothing.
func TestFromAnotherNetworkNamespace(t *testing.T) {
	for _, tool := range []string{"ip", "curl"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s not installed", tool)
		}
	}
	_, port := upstream(t, hello)
	h, err := StartHost(Policy{Allow: []string{"allowed.test:" + port}, AllowPrivate: true}, Options{
		Log:      &syncBuffer{},
		LookupIP: lookupMap(map[string]string{"allowed.test": "127.0.0.1"}),
	})
	if err != nil {
		t.Fatal(err)
	}
	script := strings.NewReplacer("PORT", port).Replace(`
c() { curl -sS --max-time 10 "$@" 2>&1; echo " rc=$?"; }
c http://allowed.test:PORT/
c -x "$ALL_PROXY" http://allowed.test:PORT/
c http://denied.test/
c --noproxy '*' http://127.0.0.1:PORT/
c --noproxy '*' http://192.0.2.1/
`)
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), netnsChildEnv+"=1", "JAIL_PROXY_SCRIPT="+script)
	cmd.ExtraFiles = []*os.File{h.Sandbox} // init's end of the Pair, as descriptor 3
	cmd.SysProcAttr = &syscall.SysProcAttr{
		Cloneflags:  syscall.CLONE_NEWUSER | syscall.CLONE_NEWNET,
		UidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getuid(), Size: 1}},
		GidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getgid(), Size: 1}},
	}
	out, err := cmd.CombinedOutput()
	if err != nil {
		testutil.Require(t, !strings.Contains(err.Error(), "operation not permitted"), "user namespaces (%v)", err)
		t.Fatalf("child: %v\n%s", err, out)
	}
	denials := h.Close().Denied
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	want := []string{
		"hello from allowed.test:" + port + " rc=0", // HTTP_PROXY
		"hello from allowed.test:" + port + " rc=0", // ALL_PROXY, socks5h
		"jail: the sandbox's network policy blocked the connection to denied.test:80: it is not in the allow list.",
		"jail: to allow it, add it to the profile: [network] allow = [\"denied.test\"], or run jail with --allow-host denied.test.",
		" rc=0",
		"curl: (7) Failed to connect to 127.0.0.1 port " + port, // the host's loopback is not the sandbox's
		" rc=7",
		"curl: (7) Failed to connect to 192.0.2.1 port 80", // no route out at all
		" rc=7",
	}
	if len(lines) != len(want) {
		t.Fatalf("child output:\n%s", out)
	}
	for i, w := range want {
		if !strings.HasPrefix(lines[i], w) {
			t.Errorf("line %d: %q, want prefix %q", i, lines[i], w)
		}
	}
	if len(denials) != 1 || denials[0].Host != "denied.test" {
		t.Errorf("denials %+v", denials)
	}
	if s := Summary(denials); s != "jail: network: 1 connection(s) denied, to denied.test (not in the allow list); to allow it, add it to the profile: [network] allow = [\"denied.test\"], or run jail with --allow-host denied.test\n" {
		t.Errorf("summary %q", s)
	}
}
