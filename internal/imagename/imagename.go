package imagename

import (
	"fmt"
	"net/netip"
	"strconv"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
)

// Names normalises repository names, with the host aliases that DNS makes
// and the operator declares (--registry-alias). The zero value has no
// aliases.
type Names struct {
	aliases map[string]string
}

// dockerHub are the hosts of Docker Hub, all "docker.io" to a runtime.
var dockerHub = []string{"index.docker.io", "registry-1.docker.io", "registry.hub.docker.com"}

// New returns the rule with aliases, each "ALIAS=CANONICAL" (two registry
// hosts, host[:port]): an image on ALIAS is governed as one on CANONICAL.
// A malformed alias, or one that maps a host to itself or twice, is an
// error.
func New(aliases []string) (Names, error) {
	n := Names{aliases: map[string]string{}}
	for _, a := range aliases {
		from, to, ok := strings.Cut(a, "=")
		if !ok {
			return Names{}, fmt.Errorf("registry alias %q: want ALIAS=CANONICAL", a)
		}
		f, err := Host(from)
		if err != nil {
			return Names{}, fmt.Errorf("registry alias %q: %w", a, err)
		}
		t, err := Host(to)
		if err != nil {
			return Names{}, fmt.Errorf("registry alias %q: %w", a, err)
		}
		if f == t {
			return Names{}, fmt.Errorf("registry alias %q: both sides are %s", a, f)
		}
		if prev, dup := n.aliases[f]; dup && prev != t {
			return Names{}, fmt.Errorf("registry alias %q: %s is already an alias of %s", a, f, prev)
		}
		n.aliases[f] = t
	}
	for f, t := range n.aliases {
		if _, chained := n.aliases[t]; chained {
			return Names{}, fmt.Errorf("registry alias %s=%s: %s is itself an alias", f, t, t)
		}
	}
	return n, nil
}

// Host normalises a registry host as container runtimes reach it: case
// folded, no trailing dot, no default port (443, 80), an IPv4-mapped IPv6
// address as the IPv4 address, an IPv4 address in any spelling inet_aton
// accepts (shortened "127.1", decimal "2130706433", hex "0x7f000001",
// octal "0177.0.0.1", padded "127.000.000.001", mixed) as its dotted quad,
// and every loopback spelling (localhost, 127.0.0.0/8, ::1) as
// "localhost". Docker Hub's hosts are "docker.io". A host that ends in a
// number without being an IPv4 address ("1.2.3.4.5", "256.0.0.1") is an
// error: a resolver reads it as an address, and no name is numeric.
func Host(h string) (string, error) {
	if h == "" || strings.TrimSpace(h) != h || strings.ContainsAny(h, "/@ \t") {
		return "", fmt.Errorf("registry host %q is not a host[:port]", h)
	}
	host, port := strings.ToLower(h), ""
	switch {
	case strings.HasPrefix(host, "["):
		end := strings.IndexByte(host, ']')
		if end < 0 || end+1 < len(host) && host[end+1] != ':' {
			return "", fmt.Errorf("registry host %q is not a host[:port]", h)
		}
		if end+1 < len(host) {
			port = host[end+2:]
		}
		host = host[1:end]
		if _, err := netip.ParseAddr(host); err != nil {
			return "", fmt.Errorf("registry host %q: %w", h, err)
		}
	case strings.Count(host, ":") == 1:
		host, port, _ = strings.Cut(host, ":")
	case strings.Contains(host, ":"):
		return "", fmt.Errorf("registry host %q: an IPv6 address needs brackets", h)
	}
	if port != "" {
		if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 || strconv.Itoa(n) != port {
			return "", fmt.Errorf("registry host %q: bad port %q", h, port)
		}
	}
	host = strings.TrimSuffix(host, ".")
	if host == "" || strings.HasSuffix(host, ".") {
		return "", fmt.Errorf("registry host %q is not a host[:port]", h)
	}
	if port == "443" || port == "80" {
		port = ""
	}
	if !strings.HasPrefix(h, "[") {
		n, err := numericHost(host)
		if err != nil {
			return "", fmt.Errorf("registry host %q: %w", h, err)
		}
		host = n
	}
	if a, err := netip.ParseAddr(host); err == nil {
		a = a.Unmap()
		switch {
		case a.IsLoopback():
			host = "localhost"
		case a.Is6():
			host = "[" + a.String() + "]"
		default:
			host = a.String()
		}
	}
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		host = "localhost"
	}
	for _, d := range dockerHub {
		if host == d && port == "" {
			host = "docker.io"
		}
	}
	if port != "" {
		return host + ":" + port, nil
	}
	return host, nil
}

// Repository returns repo ("[host/]path") normalised: its host by Host and
// the aliases, Docker Hub's short names expanded ("nginx" is
// "docker.io/library/nginx"). The first path component is a host, as for
// Docker, when it holds a dot or a colon, is "localhost", or is not all
// lower case.
func (n Names) Repository(repo string) (string, error) {
	r, err := n.repository(repo)
	if err != nil {
		return "", err
	}
	return r.Name(), nil
}

func (n Names) repository(repo string) (name.Repository, error) {
	first, rest, ok := strings.Cut(repo, "/")
	if ok && (strings.ContainsAny(first, ".:[]") || first == "localhost" || strings.ToLower(first) != first) {
		h, err := Host(first)
		if err != nil {
			return name.Repository{}, err
		}
		if to, ok := n.aliases[h]; ok {
			h = to
		}
		repo = h + "/" + rest
	}
	r, err := name.NewRepository(repo)
	if err != nil {
		return name.Repository{}, err
	}
	return r, nil
}

// Reference parses an image reference ("repo[:tag][@digest]") and returns
// it with its repository normalised by Repository.
func (n Names) Reference(ref string) (name.Reference, error) {
	repo, rest := ref, ""
	if i := strings.IndexByte(ref, '@'); i >= 0 {
		repo, rest = ref[:i], ref[i:]
	}
	if i := strings.LastIndexByte(repo, ':'); i >= 0 && i > strings.LastIndexByte(repo, '/') && !strings.HasSuffix(repo, "]") {
		repo, rest = repo[:i], repo[i:]+rest
	}
	r, err := n.repository(repo)
	if err != nil {
		return nil, err
	}
	return name.ParseReference(r.Name() + rest)
}
