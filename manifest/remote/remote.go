package remote

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"

	"github.com/lockstep-dev/lockstep/internal/transport"
	"github.com/lockstep-dev/lockstep/manifest"
	"github.com/lockstep-dev/lockstep/verdict"
)

// maxSignature bounds a .sig file.
const maxSignature = 64 << 10

// Source fetches a manifest from a URL.
type Source struct {
	url    string
	client *transport.Client
}

var _ manifest.Source = (*Source)(nil)

// New returns the source for rawURL: https, or http on a loopback host
// (127.0.0.1, ::1, localhost). client nil means the default policy.
func New(rawURL string, client *transport.Client) (*Source, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, fmt.Errorf("manifest URL %q: %w", rawURL, err)
	}
	switch {
	case u.Host == "":
		return nil, fmt.Errorf("manifest URL %q: no host", rawURL)
	case u.User != nil:
		return nil, fmt.Errorf("manifest URL %q: user information is not allowed", rawURL)
	case u.Scheme == "https":
	case u.Scheme == "http" && loopback(u.Hostname()):
	default:
		return nil, fmt.Errorf("manifest URL %q: want https (http only on a loopback host)", rawURL)
	}
	if client == nil {
		client = transport.New(transport.DefaultPolicy())
	}
	return &Source{url: u.String(), client: client}, nil
}

func loopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// Fetch GETs the manifest (at most manifest.MaxSize bytes) and URL.sig. A
// manifest that cannot be fetched (or answers other than 200) is an
// *verdict.UnavailableError, one that is not valid a
// *manifest.ValidationError. A missing .sig (404) leaves Signature empty;
// any other failure to read it is an *verdict.UnavailableError.
func (s *Source) Fetch(ctx context.Context) (*manifest.Signed, error) {
	raw, found, err := s.get(ctx, s.url, manifest.MaxSize)
	if err != nil {
		return nil, err
	}
	if !found {
		return nil, verdict.Unavailable("manifest "+s.url, fmt.Errorf("GET %s: not found: %w", s.url, manifest.ErrNotFound))
	}
	signed, err := manifest.NewSigned(raw, s.url)
	if err != nil {
		return nil, err
	}
	sig, found, err := s.get(ctx, s.url+manifest.SignatureSuffix, maxSignature)
	if err != nil {
		return nil, err
	}
	if found {
		signed.Signature = sig
	}
	return signed, nil
}

// get returns the body of u, or found=false for a 404 or 410.
func (s *Source) get(ctx context.Context, u string, limit int64) (body []byte, found bool, err error) {
	dep := "manifest " + s.url
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, false, fmt.Errorf("manifest URL %q: %w", u, err)
	}
	resp, err := s.client.HTTPClient().Do(req)
	if err != nil {
		return nil, false, verdict.Unavailable(dep, err)
	}
	defer resp.Body.Close()
	switch resp.StatusCode {
	case http.StatusOK:
	case http.StatusNotFound, http.StatusGone:
		return nil, false, nil
	default:
		return nil, false, verdict.Unavailable(dep, fmt.Errorf("GET %s: %s", u, resp.Status))
	}
	body, err = io.ReadAll(io.LimitReader(resp.Body, limit+1))
	if err != nil {
		return nil, false, verdict.Unavailable(dep, fmt.Errorf("reading %s: %w", u, err))
	}
	if int64(len(body)) > limit {
		if u == s.url {
			return nil, false, &manifest.ValidationError{Reason: fmt.Sprintf("%s is over the %d byte limit", u, limit)}
		}
		return nil, false, verdict.Unavailable(dep, errors.New(u+" is over the size limit"))
	}
	return body, true, nil
}
