package main

import (
	"encoding/json"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/jail-sandbox/jail/internal/testutil"
)

// fillTmpfs tries to write 64 MiB into each private tmpfs mount (/tmp, the home, /dev/shm,
// /dev), 1 MiB a write, and prints how many bytes it wrote, how many writes failed with ENOSPC
// and by how much the host's shared memory (Shmem in /proc/meminfo, which is not namespaced)
// grew while the files were held.
const fillTmpfs = `import errno, os
def shmem():
    for line in open("/proc/meminfo"):
        if line.startswith("Shmem:"):
            return int(line.split()[1]) * 1024
before = shmem()
chunk = b"x" * (1 << 20)
written = enospc = 0
for d in ["/tmp", os.environ["HOME"], "/dev/shm", "/dev"]:
    fd = os.open(d + "/fill", os.O_WRONLY | os.O_CREAT, 0o600)
    for i in range(64):
        try:
            written += os.write(fd, chunk)
        except OSError as e:
            if e.errno != errno.ENOSPC:
                raise
            enospc += 1
            break
    os.close(fd)
print(written, enospc, shmem() - before)`

// TestPrivateTmpfsBounded: a command that fills every private tmpfs mount gets ENOSPC once
// [limits] tmpfs bytes are written across all of them, and the host's memory grows by no more
// than that. Without the bound each mount took half the host's RAM.
func TestPrivateTmpfsBounded(t *testing.T) {
	const limit = 64 << 20
	dir := t.TempDir()
	profile := filepath.Join(dir, "small.toml")
	testutil.WriteFile(t, profile, "extends = [\"agent\"]\n[limits]\ntmpfs = "+strconv.Itoa(limit)+"\n")
	out, errOut, code := runJailIn(t, dir, "", "-p", profile, "--", "python3", "-c", fillTmpfs)
	f := strings.Fields(out)
	if code != 0 || len(f) != 3 {
		t.Fatalf("filling the tmpfs mounts: %q (exit %d, %s)", out, code, errOut)
	}
	written, _ := strconv.Atoi(f[0])
	enospc, _ := strconv.Atoi(f[1])
	grew, _ := strconv.Atoi(f[2])
	t.Logf("wrote %d MiB, %d ENOSPC, host Shmem grew %d MiB", written>>20, enospc, grew>>20)
	if written > limit || enospc == 0 {
		t.Errorf("wrote %d bytes with %d ENOSPC under limits.tmpfs = %d: want ENOSPC at the limit", written, enospc, limit)
	}
	// The other processes of the machine move Shmem too: allow them half the limit.
	if grew > limit+limit/2 {
		t.Errorf("host Shmem grew by %d bytes while the sandbox held its files, limit %d", grew, limit)
	}
}

// TestPrivateTmpfsDefault: without [limits] tmpfs the plan bounds the private tmpfs mounts to
// an eighth of the host's RAM.
func TestPrivateTmpfsDefault(t *testing.T) {
	out, errOut, code := runJail(t, "--dry-run", "--", "true")
	var spec struct {
		Limits struct {
			Tmpfs uint64 `json:"tmpfs"`
		} `json:"limits"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &spec) != nil {
		t.Fatalf("--dry-run: exit %d, %s", code, errOut)
	}
	var info unix.Sysinfo_t
	if err := unix.Sysinfo(&info); err != nil {
		t.Fatal(err)
	}
	if want := uint64(info.Totalram) * uint64(info.Unit) / 8; spec.Limits.Tmpfs != want {
		t.Errorf("limits.tmpfs = %d, want an eighth of the RAM, %d", spec.Limits.Tmpfs, want)
	}
}
