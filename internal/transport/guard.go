package transport

import (
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"syscall"
	"time"
)

// LinkLocal are the addresses the gate never contacts unless told to:
// IPv4 and IPv6 link-local (169.254.0.0/16, where the cloud metadata and
// credential services live, and fe80::/10) and the IPv6 address of the
// EC2 metadata service (fd00:ec2::254).
var LinkLocal = []netip.Prefix{
	netip.MustParsePrefix("169.254.0.0/16"),
	netip.MustParsePrefix("fe80::/10"),
	netip.MustParsePrefix("fd00:ec2::254/128"),
}

// DeniedAddressError reports a request to an address the client must not
// contact. It is never retried.
type DeniedAddressError struct {
	// Addr is the address refused (ip:port, or the URL host).
	Addr string
}

func (e *DeniedAddressError) Error() string {
	return fmt.Sprintf("refusing to contact %s: a link-local or metadata address", e.Addr)
}

// RedirectError reports a redirect to another origin (scheme, host or
// port) that the client does not follow. It is never retried.
type RedirectError struct {
	From, To string
}

func (e *RedirectError) Error() string {
	return fmt.Sprintf("refusing the redirect from %s to %s: another origin", e.From, e.To)
}

// WithDeniedAddresses refuses to connect to any address in prefixes (an
// IPv4-mapped IPv6 address counts as its IPv4 address), with a
// *DeniedAddressError. The check is made on the address dialed, after name
// resolution, so a name that resolves to a denied address is refused too;
// a URL whose host is a denied literal is refused before any connection
// (also when a proxy would carry it).
func WithDeniedAddresses(prefixes ...netip.Prefix) Option {
	return func(c *Client) {
		c.denyPrefixes = append([]netip.Prefix(nil), prefixes...)
		if len(c.denyPrefixes) == 0 {
			return
		}
		d := &net.Dialer{Timeout: c.policy.Timeout, KeepAlive: 30 * time.Second,
			Control: func(_, address string, _ syscall.RawConn) error {
				if c.deniedAddr(address) {
					return &DeniedAddressError{Addr: address}
				}
				return nil
			}}
		c.base.DialContext = d.DialContext
	}
}

// WithSameOriginRedirects makes HTTPClient refuse a redirect to another
// origin than the request's, with a *RedirectError.
func WithSameOriginRedirects() Option {
	return func(c *Client) { c.sameOrigin = true }
}

// deniedAddr reports whether hostport (ip:port, or a bare host) is in the
// denied prefixes. A name that is not an IP literal is not denied here.
func (c *Client) deniedAddr(hostport string) bool {
	if len(c.denyPrefixes) == 0 {
		return false
	}
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	if i := strings.IndexByte(host, '%'); i >= 0 {
		host = host[:i] // a zone: fe80::1%eth0
	}
	ip, err := netip.ParseAddr(host)
	if err != nil {
		return false
	}
	ip = ip.Unmap()
	for _, p := range c.denyPrefixes {
		if p.Contains(ip) {
			return true
		}
	}
	return false
}

// checkDenied refuses a request whose URL host is a denied literal.
func (c *Client) checkDenied(req *http.Request) error {
	if c.deniedAddr(req.URL.Host) {
		return &DeniedAddressError{Addr: req.URL.Host}
	}
	return nil
}

// Origin is the scheme, lower-case host and explicit port of u's URL, for
// comparing origins: http://A and http://a:80 are one origin.
func Origin(scheme, host string) string {
	scheme = strings.ToLower(scheme)
	h, port, err := net.SplitHostPort(host)
	if err != nil {
		h, port = host, ""
	}
	h = strings.TrimSuffix(strings.ToLower(strings.Trim(h, "[]")), ".")
	if port == "" {
		switch scheme {
		case "https":
			port = "443"
		case "http":
			port = "80"
		}
	}
	return scheme + "://" + net.JoinHostPort(h, port)
}

// CheckSameOrigin is an http.Client CheckRedirect rule: a redirect must
// stay on the origin of the first request.
func CheckSameOrigin(req *http.Request, via []*http.Request) error {
	if len(via) == 0 {
		return nil
	}
	first := via[0].URL
	if Origin(req.URL.Scheme, req.URL.Host) != Origin(first.Scheme, first.Host) {
		return &RedirectError{From: via[len(via)-1].URL.String(), To: req.URL.String()}
	}
	return nil
}
