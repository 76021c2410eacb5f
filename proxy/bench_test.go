package proxy

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

const (
	benchSize = 200 << 20
	// pacedRate stands for a fast real link (3.2 Gbit/s): what the proxy costs when the
	// network, not the CPU, is the limit.
	pacedRate = 400e6 // bytes per second
)

// rawHTTP is a minimal loopback HTTP/1.1 server for the benchmark: GET /big answers benchSize
// bytes as fast as it can, GET /paced the same at pacedRate, anything else a short body; one
// request per connection.
func rawHTTP(c net.Conn) {
	br := bufio.NewReader(c)
	req, err := http.ReadRequest(br)
	if err != nil {
		return
	}
	if req.URL.Path != "/big" && req.URL.Path != "/paced" {
		_, _ = io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok")
		return
	}
	fmt.Fprintf(c, "HTTP/1.1 200 OK\r\nContent-Length: %d\r\nConnection: close\r\n\r\n", benchSize)
	chunk := make([]byte, 1<<20)
	start := time.Now()
	for sent := 0; sent < benchSize; sent += len(chunk) {
		if req.URL.Path == "/paced" {
			time.Sleep(time.Until(start.Add(time.Duration(float64(sent) / pacedRate * 1e9))))
		}
		if _, err := c.Write(chunk); err != nil {
			return
		}
	}
}

// cpuTime is the process's user + system time: unlike throughput it barely depends on what
// else the machine runs.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func median(d []time.Duration) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[len(s)/2]
}

// fetch sends one GET on c (target is the request-target) and drains the answer.
func fetch(c net.Conn, r *bufio.Reader, target string) (int64, error) {
	defer c.Close()
	if r == nil {
		r = bufio.NewReaderSize(c, 64<<10)
	}
	if _, err := fmt.Fprintf(c, "GET %s HTTP/1.1\r\nHost: bench.test\r\nConnection: close\r\n\r\n", target); err != nil {
		return 0, err
	}
	resp, err := http.ReadResponse(r, nil)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	buf := make([]byte, 256<<10)
	return io.CopyBuffer(struct{ io.Writer }{io.Discard}, resp.Body, buf)
}

// BenchmarkProxy downloads benchSize bytes from a loopback server directly, through a CONNECT
// tunnel and as a plain forwarded request (both via Forward's 127.0.0.1 port and the unix
// socket, as from inside a sandbox), and times new connections each way. Run it with
// `go test -run '^$' -bench Proxy -benchtime 3x ./proxy/` or bench/proxy.sh.
func BenchmarkProxy(b *testing.B) {
	port := tcpServer(b, rawHTTP)
	tp := startProxy(b, Policy{Allow: []string{"bench.test:" + port}, AllowPrivate: true}, map[string]string{"bench.test": "127.0.0.1"}, func(o *Options) { o.Quiet = true })
	direct := func(path string) (int64, error) {
		c, err := net.Dial("tcp", "127.0.0.1:"+port)
		if err != nil {
			return 0, err
		}
		return fetch(c, nil, path)
	}
	connect := func(path string) (int64, error) {
		c, r, err := tunnel(tp.addr, "bench.test:"+port)
		if err != nil {
			return 0, err
		}
		return fetch(c, r.(*bufio.Reader), path)
	}
	forward := func(path string) (int64, error) {
		c, err := net.Dial("tcp", tp.addr)
		if err != nil {
			return 0, err
		}
		return fetch(c, nil, "http://bench.test:"+port+path)
	}
	ways := []struct {
		name string
		get  func(string) (int64, error)
	}{{"direct", direct}, {"connect", connect}, {"forward", forward}}

	elapsed := make([][]time.Duration, len(ways)) // per run, for medians: the machine is shared
	paced := make([][]time.Duration, len(ways))
	latency := make([][]time.Duration, len(ways))
	cpu := make([][]time.Duration, len(ways)) // CPU time (client + proxy + server) per download
	const conns = 200
	b.SetBytes(benchSize)
	for b.Loop() {
		for i, w := range ways { // interleaved, so machine noise hits every way alike
			start, cpu0 := time.Now(), cpuTime(b)
			if n, err := w.get("/big"); err != nil || n != benchSize {
				b.Fatalf("%s: %d bytes, %v", w.name, n, err)
			}
			elapsed[i] = append(elapsed[i], time.Since(start))
			cpu[i] = append(cpu[i], cpuTime(b)-cpu0)
			start = time.Now()
			if n, err := w.get("/paced"); err != nil || n != benchSize {
				b.Fatalf("%s paced: %d bytes, %v", w.name, n, err)
			}
			paced[i] = append(paced[i], time.Since(start))
			start = time.Now()
			for range conns {
				if _, err := w.get("/small"); err != nil {
					b.Fatalf("%s small: %v", w.name, err)
				}
			}
			latency[i] = append(latency[i], time.Since(start)/conns)
		}
	}
	var report strings.Builder
	mbps := make([]float64, len(ways))
	pacedMBps := make([]float64, len(ways))
	lat := make([]float64, len(ways))
	for i, w := range ways {
		mbps[i] = float64(benchSize) / median(elapsed[i]).Seconds() / 1e6
		pacedMBps[i] = float64(benchSize) / median(paced[i]).Seconds() / 1e6
		lat[i] = float64(median(latency[i]).Nanoseconds()) / 1e3
		b.ReportMetric(mbps[i], w.name+"-MB/s")
		b.ReportMetric(lat[i], w.name+"-conn-µs")
		c := median(cpu[i]).Seconds() * 1e3
		b.ReportMetric(c, w.name+"-cpu-ms")
		fmt.Fprintf(&report, "%-8s %5.0f MB/s (%.2fx direct) %4.0f ms CPU | at %.0f MB/s: %4.0f MB/s (%.2fx) | new connection + small request %5.0f µs (%+.0f µs)\n",
			w.name, mbps[i], mbps[i]/mbps[0], c, pacedRate/1e6, pacedMBps[i], pacedMBps[i]/pacedMBps[0], lat[i], lat[i]-lat[0])
	}
	b.ReportMetric(pacedMBps[1]/pacedMBps[0], "paced-connect/direct")
	b.ReportMetric(pacedMBps[2]/pacedMBps[0], "paced-forward/direct")
	b.ReportMetric(mbps[1]/mbps[0], "connect/direct")
	b.ReportMetric(mbps[2]/mbps[0], "forward/direct")
	b.Logf("200 MB download on loopback, median of %d interleaved runs:\n%s", b.N, report.String())
}

// BenchmarkProxySmall sends 1000 small requests on one kept connection directly, through one
// CONNECT tunnel and as plain forwarded requests (through Forward's port, as from inside a
// sandbox), interleaved, and reports the rates and the CPU time (client, proxy and server) per
// request. `go test -run '^$' -bench ProxySmall -benchtime 5x ./proxy/`
func BenchmarkProxySmall(b *testing.B) {
	_, port := upstream(b, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write([]byte("ok")) }))
	tp := startProxy(b, Policy{Allow: []string{"bench.test:" + port}, AllowPrivate: true}, map[string]string{"bench.test": "127.0.0.1"}, func(o *Options) { o.Quiet = true })
	const n = 1000
	requests := func(c net.Conn, r *bufio.Reader, target string) error {
		defer c.Close()
		if r == nil {
			r = bufio.NewReader(c)
		}
		req := []byte("GET " + target + " HTTP/1.1\r\nHost: bench.test:" + port + "\r\n\r\n")
		for range n {
			if _, err := c.Write(req); err != nil {
				return err
			}
			resp, err := http.ReadResponse(r, nil)
			if err != nil {
				return err
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
		return nil
	}
	ways := []struct {
		name string
		run  func() error
	}{
		{"direct", func() error {
			c, err := net.Dial("tcp", "127.0.0.1:"+port)
			if err != nil {
				return err
			}
			return requests(c, nil, "/s")
		}},
		{"connect", func() error {
			c, r, err := tunnel(tp.addr, "bench.test:"+port)
			if err != nil {
				return err
			}
			return requests(c, r.(*bufio.Reader), "/s")
		}},
		{"forward", func() error {
			c, err := net.Dial("tcp", tp.addr)
			if err != nil {
				return err
			}
			return requests(c, nil, "http://bench.test:"+port+"/s")
		}},
	}
	elapsed := make([][]time.Duration, len(ways))
	cpu := make([][]time.Duration, len(ways))
	for b.Loop() {
		for i, w := range ways {
			start, cpu0 := time.Now(), cpuTime(b)
			if err := w.run(); err != nil {
				b.Fatalf("%s: %v", w.name, err)
			}
			elapsed[i] = append(elapsed[i], time.Since(start))
			cpu[i] = append(cpu[i], cpuTime(b)-cpu0)
		}
	}
	var report strings.Builder
	rate := make([]float64, len(ways))
	for i, w := range ways {
		rate[i] = n / median(elapsed[i]).Seconds()
		c := float64(median(cpu[i]).Microseconds()) / n
		b.ReportMetric(rate[i], w.name+"-req/s")
		b.ReportMetric(c, w.name+"-cpu-µs/req")
		fmt.Fprintf(&report, "%-8s %6.0f requests/s (%.2fx direct) %5.1f µs CPU a request\n", w.name, rate[i], rate[i]/rate[0], c)
	}
	b.ReportMetric(rate[2]/rate[1], "forward/connect")
	b.Logf("%d small requests on one kept connection, median of %d interleaved runs; forward / CONNECT %.2fx:\n%s", n, b.N, rate[2]/rate[1], report.String())
}
