package profiles

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jail-sandbox/jail/internal/testutil"
)

// TestCheckFindsEveryError checks that one Check reports each mistake of a file and of the file
// it extends, of every kind (unknown key, wrong type, bad value, missing required path, unknown
// variable), each at its own file, line and key, in line order.
func TestCheckFindsEveryError(t *testing.T) {
	host := testHost(t)
	dir := t.TempDir()
	testutil.WriteFile(t, filepath.Join(dir, "base.toml"), "[process]\nenv = [\"PATH\", \"not a name\"]\n")
	testutil.WriteFile(t, filepath.Join(dir, "top.toml"), `extends = ["base.toml"]
[filesystem]
reed = ["/etc"]
read = ["/usr", "/no/such/jail/path", "$NOPE/x"]
[network]
mode = "internet"
tcp_connect = [70000]
[process]
hostname = 5
[syscalls]
deny = ["ptrce"]
`)
	_, err := Check(filepath.Join(dir, "top.toml"), host)
	var list ErrorList
	if !errors.As(err, &list) {
		t.Fatalf("Check: %v (%T), want an ErrorList", err, err)
	}
	want := []string{
		"base.toml:2: process.env: \"not a name\" is not NAME",
		"top.toml:3: filesystem.reed: unknown key",
		"top.toml:4: filesystem.read: $NOPE/x: unknown variable $NOPE",
		"top.toml:4: filesystem.read: missing required path /no/such/jail/path",
		"top.toml:6: network.mode: \"internet\" is not valid",
		"top.toml:7: network.tcp_connect: wrong type: want a list of port numbers",
		"top.toml:9: process.hostname: wrong type: want a string",
		"top.toml:11: syscalls.deny: unknown syscall \"ptrce\"",
	}
	var got []string
	for _, e := range list {
		got = append(got, fmt.Sprintf("%s:%d: %s: %s", filepath.Base(e.File), e.Line, e.Key, e.Err))
	}
	if len(got) != len(want) {
		t.Fatalf("got %d errors:\n%s\nwant %d", len(got), strings.Join(got, "\n"), len(want))
	}
	for i := range want {
		if !strings.HasPrefix(got[i], want[i]) {
			t.Errorf("error %d: %q, want it to start %q", i, got[i], want[i])
		}
	}
	// A run stops at what does not decode, but names all of that.
	_, err = Load(filepath.Join(dir, "top.toml"), host)
	if !errors.As(err, &list) || len(list) != 3 {
		t.Errorf("Load: %v, want the 3 errors of decoding", err)
	}
}

// TestCheckGood checks that a file without mistakes checks clean, with its warnings.
func TestCheckGood(t *testing.T) {
	host := testHost(t)
	file := filepath.Join(t.TempDir(), "ok.toml")
	testutil.WriteFile(t, file, "extends = [\"agent\"]\n[network]\ntcp_connect = [443]\n")
	spec, err := Check(file, host)
	if err != nil {
		t.Fatalf("Check: %v", err)
	}
	if len(spec.Warnings) != 1 {
		t.Errorf("warnings %q, want the one of tcp_connect", spec.Warnings)
	}
}
