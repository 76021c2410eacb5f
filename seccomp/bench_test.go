package seccomp

import (
	"encoding/binary"
	"runtime"
	"testing"

	"golang.org/x/sys/unix"
)

// The filter's cost per syscall, measured in CPU time of the thread (robust against a loaded
// machine, unlike wall time). Each benchmark runs on a fresh locked thread that is never
// unlocked: the Go runtime ends that thread, and its filter, with the goroutine.
//
//	go test -run '^$' -bench . ./seccomp/
func BenchmarkSyscall(b *testing.B) {
	f, err := Compile(Policy{})
	if err != nil {
		b.Fatal(err)
	}
	var st unix.Stat_t
	calls := []struct {
		name string
		fn   func()
	}{
		{"getpid", func() { unix.RawSyscall(unix.SYS_GETPID, 0, 0, 0) }},
		{"stat", func() { unix.Stat("/", &st) }},
		// ioctl has argument checks, so the filter runs for it (no action cache).
		{"ioctl-checked", func() { unix.RawSyscall(unix.SYS_IOCTL, ^uintptr(0), unix.TCGETS, 0) }},
	}
	// allowAll is the one-instruction filter "return ALLOW": the fixed cost of being under
	// seccomp at all (the syscall slow path), which any filter pays.
	allowAll := binary.NativeEndian.AppendUint16(nil, unix.BPF_RET|unix.BPF_K)
	allowAll = binary.NativeEndian.AppendUint32(append(allowAll, 0, 0), unix.SECCOMP_RET_ALLOW)
	filters := []struct {
		name string
		bpf  []byte
	}{{"none", nil}, {"allow-all", allowAll}, {"default", f.BPF()}}
	for _, c := range calls {
		for _, filter := range filters {
			b.Run(c.name+"/"+filter.name, func(b *testing.B) { benchOnThread(b, filter.bpf, c.fn) })
		}
	}
}

// benchOnThread runs fn b.N times on a new locked thread, under bpf unless it is nil.
func benchOnThread(b *testing.B, bpf []byte, fn func()) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		runtime.LockOSThread() // never unlocked: the thread dies with the goroutine
		if bpf != nil {
			if err := Install(bpf); err != nil {
				b.Error(err)
				return
			}
		}
		start := threadCPU()
		b.ResetTimer()
		for range b.N {
			fn()
		}
		b.StopTimer()
		b.ReportMetric(float64(threadCPU()-start)/float64(b.N), "cpu-ns/op")
	}()
	<-done
}

// threadCPU is the calling thread's CPU time in nanoseconds.
func threadCPU() int64 {
	var ts unix.Timespec
	unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts)
	return ts.Nano()
}
