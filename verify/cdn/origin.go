package cdn

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"strings"

	"github.com/lockstep-dev/lockstep/manifest"
)

// Resolver resolves host names; *net.Resolver is one, and tests pass a
// fake.
type Resolver interface {
	LookupIPAddr(ctx context.Context, host string) ([]net.IPAddr, error)
}

// OriginError refuses an origin that is the CDN itself, or resolves to the
// same address and port as a CDN base: a CDN that fetches from itself
// loops. It is an input error: it unwraps to a *manifest.ValidationError
// (exit 2).
type OriginError struct {
	Origin string
	CDN    string
	// Reason says how they are the same.
	Reason string
}

func (e *OriginError) Error() string {
	return fmt.Sprintf("origin %s is the CDN %s (%s): a CDN whose origin is itself loops", e.Origin, e.CDN, e.Reason)
}

// Unwrap returns the equivalent *manifest.ValidationError.
func (e *OriginError) Unwrap() error {
	return &manifest.ValidationError{Field: "assets.origin", Reason: e.Error()}
}

// OriginCheck is what the check found about the origin.
type OriginCheck struct {
	URL string `json:"url"`
	// Addresses are the origin's resolved addresses (ip:port).
	Addresses []string `json:"addresses,omitempty"`
	// Note says why the comparison was incomplete (a name did not
	// resolve), if it was.
	Note string `json:"note,omitempty"`
}

// endpoint is a URL's scheme, host and port, the port made explicit.
type endpoint struct {
	scheme, host, port string
}

func parseEndpoint(s string) (endpoint, error) {
	u, err := url.Parse(s)
	if err != nil {
		return endpoint{}, err
	}
	e := endpoint{scheme: strings.ToLower(u.Scheme), host: strings.ToLower(strings.TrimSuffix(u.Hostname(), ".")), port: u.Port()}
	if e.port == "" {
		e.port = map[string]string{"http": "80", "https": "443"}[e.scheme]
	}
	return e, nil
}

// addrs resolves e's host (or parses an IP literal) to ip:port strings.
func (e endpoint) addrs(ctx context.Context, r Resolver) ([]string, error) {
	var ips []netip.Addr
	if ip, err := netip.ParseAddr(e.host); err == nil {
		ips = []netip.Addr{ip}
	} else {
		res, err := r.LookupIPAddr(ctx, e.host)
		if err != nil {
			return nil, err
		}
		for _, a := range res {
			if ip, ok := netip.AddrFromSlice(a.IP); ok {
				ips = append(ips, ip)
			}
		}
	}
	out := make([]string, 0, len(ips))
	for _, ip := range ips {
		out = append(out, ip.Unmap().String()+"|"+e.port)
	}
	return out, nil
}

// checkOrigin refuses an origin that is one of the CDN bases, by scheme,
// host and port, or by resolved address and port.
func checkOrigin(ctx context.Context, origin string, cdn []string, r Resolver) (*OriginCheck, error) {
	if err := manifest.ValidateBaseURL(origin); err != nil {
		return nil, &manifest.ValidationError{Field: "assets.origin", Reason: err.Error()}
	}
	oc := &OriginCheck{URL: origin}
	o, _ := parseEndpoint(origin)
	for _, base := range cdn {
		b, err := parseEndpoint(base)
		if err != nil {
			return nil, &manifest.ValidationError{Field: "assets.cdn", Reason: err.Error()}
		}
		if o == b {
			return nil, &OriginError{Origin: origin, CDN: base, Reason: "the same scheme, host and port"}
		}
	}
	oaddrs, err := o.addrs(ctx, r)
	if err != nil {
		oc.Note = fmt.Sprintf("resolving the origin %s: %v; compared by name only", o.host, err)
		return oc, nil
	}
	mine := map[string]bool{}
	for _, a := range oaddrs {
		mine[a] = true
		ip, port, _ := strings.Cut(a, "|")
		oc.Addresses = append(oc.Addresses, net.JoinHostPort(ip, port))
	}
	for _, base := range cdn {
		b, _ := parseEndpoint(base)
		baddrs, err := b.addrs(ctx, r)
		if err != nil {
			oc.Note = fmt.Sprintf("resolving the CDN %s: %v; compared by name only", b.host, err)
			continue
		}
		for _, a := range baddrs {
			if mine[a] {
				ip, port, _ := strings.Cut(a, "|")
				return nil, &OriginError{Origin: origin, CDN: base, Reason: "both resolve to " + net.JoinHostPort(ip, port)}
			}
		}
	}
	return oc, nil
}
