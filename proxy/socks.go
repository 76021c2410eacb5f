package proxy

import (
	"encoding/binary"
	"errors"
	"io"
	"net"
	"net/netip"
	"syscall"
	"time"
)

// SOCKS5 (RFC 1928) constants used here.
const (
	socks5Version   = 5
	socksNoAuth     = 0
	socksNoMethod   = 0xff
	socksCmdConnect = 1
	socksAtypIPv4   = 1
	socksAtypDomain = 3
	socksAtypIPv6   = 4

	socksOK                  = 0
	socksGeneralFailure      = 1
	socksNotAllowed          = 2 // "connection not allowed by ruleset": every policy refusal
	socksHostUnreachable     = 4
	socksConnRefused         = 5
	socksTTLExpired          = 6
	socksCmdUnsupported      = 7
	socksAddrTypeUnsupported = 8
)

// serveSOCKS runs one SOCKS5 CONNECT: no authentication, the destination given as a name
// (socks5h, resolved here on the host) or an address, decided like an HTTP CONNECT. A
// refusal is reply code 2; the details go to the log, SOCKS having no room for a message.
func (s *Server) serveSOCKS(c *conn) {
	host, port, code, err := readSOCKSRequest(c)
	if err != nil {
		if code != 0 {
			_ = writeSOCKSReply(c, code)
		}
		_ = c.Close()
		return
	}
	t, d := s.decide(host, port)
	if d != nil {
		_ = writeSOCKSReply(c, socksNotAllowed)
		_ = c.Close()
		return
	}
	up, err := s.connect(s.ctx, t)
	if err != nil {
		_ = writeSOCKSReply(c, socksErrorCode(err))
		_ = c.Close()
		return
	}
	if err := writeSOCKSReply(c, socksOK); err != nil {
		_ = c.Close()
		_ = up.Close()
		return
	}
	_ = c.SetDeadline(time.Time{})
	relay(c, nil, up, s.opts.IdleTimeout)
}

// readSOCKSRequest reads the method negotiation and the request. code is the reply to send
// before closing when the request is refused (0: just close).
func readSOCKSRequest(c *conn) (host string, port uint16, code byte, err error) {
	var hdr [2]byte // version, number of methods
	if _, err = io.ReadFull(c, hdr[:]); err != nil {
		return "", 0, 0, err
	}
	methods := make([]byte, hdr[1])
	if _, err = io.ReadFull(c, methods); err != nil {
		return "", 0, 0, err
	}
	method := byte(socksNoMethod)
	for _, m := range methods {
		if m == socksNoAuth {
			method = socksNoAuth
		}
	}
	if _, err = c.Write([]byte{socks5Version, method}); err != nil || method == socksNoMethod {
		return "", 0, 0, errors.New("socks: no acceptable method")
	}
	var req [4]byte // version, command, reserved, address type
	if _, err = io.ReadFull(c, req[:]); err != nil {
		return "", 0, 0, err
	}
	if req[0] != socks5Version {
		return "", 0, socksGeneralFailure, errors.New("socks: bad version")
	}
	if req[1] != socksCmdConnect {
		return "", 0, socksCmdUnsupported, errors.New("socks: only CONNECT is supported")
	}
	var addr []byte
	switch req[3] {
	case socksAtypIPv4:
		addr = make([]byte, 4)
	case socksAtypIPv6:
		addr = make([]byte, 16)
	case socksAtypDomain:
		var n [1]byte
		if _, err = io.ReadFull(c, n[:]); err != nil {
			return "", 0, 0, err
		}
		addr = make([]byte, n[0])
	default:
		return "", 0, socksAddrTypeUnsupported, errors.New("socks: unknown address type")
	}
	var p [2]byte
	if _, err = io.ReadFull(c, addr); err != nil {
		return "", 0, 0, err
	}
	if _, err = io.ReadFull(c, p[:]); err != nil {
		return "", 0, 0, err
	}
	port = binary.BigEndian.Uint16(p[:])
	if port == 0 {
		return "", 0, socksGeneralFailure, errors.New("socks: port 0")
	}
	if req[3] == socksAtypDomain {
		return string(addr), port, 0, nil
	}
	ip, _ := netip.AddrFromSlice(addr)
	return ip.String(), port, 0, nil
}

// writeSOCKSReply answers with code and an empty bound address: the host-side address is
// none of the sandbox's business.
func writeSOCKSReply(c net.Conn, code byte) error {
	_, err := c.Write([]byte{socks5Version, code, 0, socksAtypIPv4, 0, 0, 0, 0, 0, 0})
	return err
}

func socksErrorCode(err error) byte {
	var d *Denial
	switch {
	case errors.As(err, &d):
		return socksNotAllowed
	case errors.Is(err, syscall.ECONNREFUSED):
		return socksConnRefused
	case isTimeout(err):
		return socksTTLExpired
	case errors.Is(err, syscall.EHOSTUNREACH), errors.Is(err, syscall.ENETUNREACH):
		return socksHostUnreachable
	}
	var dnsErr *net.DNSError
	if errors.As(err, &dnsErr) {
		return socksHostUnreachable
	}
	return socksGeneralFailure
}
