// Command httpserver is bench/proxy.sh's upstream: an HTTP/1.1 server on a loopback port that
// keeps connections alive, answers /big with 100 MB as fast as it can write, /paced with the
// same at 400 MB/s (a fast real link: the network, not the CPU, is the limit), and anything
// else with a two-byte body. It prints its address, then serves until killed.
package main

import (
	"fmt"
	"net"
	"net/http"
	"os"
	"strconv"
	"time"
)

const (
	bigSize   = 100 << 20
	pacedRate = 400e6 // bytes per second
)

func main() {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, "httpserver:", err)
		os.Exit(1)
	}
	chunk := make([]byte, 1<<20)
	big := func(w http.ResponseWriter, rate float64) {
		w.Header().Set("Content-Length", strconv.Itoa(bigSize))
		start := time.Now()
		for sent := 0; sent < bigSize; sent += len(chunk) {
			if rate > 0 {
				time.Sleep(time.Until(start.Add(time.Duration(float64(sent) / rate * 1e9))))
			}
			if _, err := w.Write(chunk); err != nil {
				return
			}
		}
	}
	http.HandleFunc("/big", func(w http.ResponseWriter, r *http.Request) { big(w, 0) })
	http.HandleFunc("/paced", func(w http.ResponseWriter, r *http.Request) { big(w, pacedRate) })
	http.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte("ok"))
	})
	fmt.Println(l.Addr())
	fmt.Fprintln(os.Stderr, "httpserver:", http.Serve(l, nil))
	os.Exit(1)
}
