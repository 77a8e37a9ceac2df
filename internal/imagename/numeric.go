package imagename

import (
	"fmt"
	"net/netip"
	"strings"
)

// inetAton parses s as glibc's inet_aton (and so getaddrinfo, curl and
// every resolver built on it) reads an IPv4 address: one to four parts
// separated by dots, each decimal, octal (a leading 0) or hexadecimal (a
// leading 0x or 0X), the parts before the last one byte each and the last
// one filling the bytes that remain ("127.1" is 127.0.0.1, "2130706433"
// and "0x7f000001" are too, "0177.0.0.1" and "127.000.000.001" as well).
// ok is false for anything else, which such a resolver would look up as a
// name. Unlike inet_aton it takes no trailing white space (a registry
// host holds none).
func inetAton(s string) (a netip.Addr, ok bool) {
	parts := strings.Split(s, ".")
	if len(parts) > 4 {
		return netip.Addr{}, false
	}
	var b [4]byte
	for i, p := range parts {
		v, ok := inetAtonPart(p)
		if !ok {
			return netip.Addr{}, false
		}
		if i < len(parts)-1 {
			if v > 0xff {
				return netip.Addr{}, false
			}
			b[i] = byte(v)
			continue
		}
		// The last part fills the 4-i bytes left, big-endian.
		if rest := 4 - i; rest < 4 && v>>(8*rest) != 0 {
			return netip.Addr{}, false
		}
		for j := 3; j >= i; j-- {
			b[j] = byte(v)
			v >>= 8
		}
	}
	return netip.AddrFrom4(b), true
}

// inetAtonPart is strtoul(p, &end, 0) required to consume all of p, which
// must start with a digit, and to fit 32 bits.
func inetAtonPart(p string) (uint64, bool) {
	if p == "" || p[0] < '0' || p[0] > '9' {
		return 0, false
	}
	base, digits := uint64(10), p
	switch {
	case len(p) > 1 && p[0] == '0' && (p[1] == 'x' || p[1] == 'X'):
		base, digits = 16, p[2:]
	case p[0] == '0':
		base = 8
	}
	if digits == "" {
		return 0, false // "0x": strtoul stops at the x
	}
	var v uint64
	for _, c := range []byte(digits) {
		var d uint64
		switch {
		case c >= '0' && c <= '9':
			d = uint64(c - '0')
		case base == 16 && c >= 'a' && c <= 'f':
			d = uint64(c-'a') + 10
		case base == 16 && c >= 'A' && c <= 'F':
			d = uint64(c-'A') + 10
		default:
			return 0, false
		}
		if d >= base {
			return 0, false
		}
		if v = v*base + d; v > 0xffffffff {
			return 0, false
		}
	}
	return v, true
}

// endsInNumber reports whether host's last label is a number as
// inet_aton writes one (all digits, or 0x and hex digits): the WHATWG URL
// standard's "ends in a number". Such a host is an IPv4 address or
// nothing: no top-level domain is numeric, and a resolver reads it as an
// address first.
func endsInNumber(host string) bool {
	last := host[strings.LastIndexByte(host, '.')+1:]
	if last == "" {
		return false
	}
	if len(last) > 1 && last[0] == '0' && (last[1] == 'x' || last[1] == 'X') {
		return strings.Trim(last[2:], "0123456789abcdefABCDEF") == ""
	}
	return strings.Trim(last, "0123456789") == ""
}

// numericHost returns host in dotted-quad form when it is an IPv4 address
// in any spelling inet_aton accepts; it is host unchanged when it is not a
// number at all, and an error when it ends in a number without being an
// address ("1.2.3.4.5", "256.1.1.1", "08.1").
func numericHost(host string) (string, error) {
	if !endsInNumber(host) {
		return host, nil
	}
	if a, ok := inetAton(host); ok {
		return a.String(), nil
	}
	return "", fmt.Errorf("%q is a number but not an IPv4 address", host)
}
