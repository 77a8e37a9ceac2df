package webhook

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"

	"gopkg.in/yaml.v3"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/lockstep-dev/lockstep/internal/imagename"
	"github.com/lockstep-dev/lockstep/manifest"
)

// RoutesAPIVersion and RoutesKind identify a routes file.
const (
	RoutesAPIVersion = "lockstep.dev/v1"
	RoutesKind       = "WebhookRoutes"
)

// MaxRoutesSize bounds a routes file, in bytes.
const MaxRoutesSize = 1 << 20

// Routes is a routes file: which releases govern which pods, so that one
// webhook governs every release of a cluster. Routes are tried in order;
// for each image of a pod, the first route that applies to the pod's
// namespace and governs the image's repository judges it. An image that no
// route governs is unmanaged (Options.Unmanaged).
//
//	apiVersion: lockstep.dev/v1
//	kind: WebhookRoutes
//	routes:
//	  - release: store-web
//	    namespaces: [store, store-canary]
//	  - release: payments
//	    channel: canary
//	    namespaces: [payments]
//	    repositories: [registry.example.com/payments/api]
type Routes struct {
	APIVersion string  `yaml:"apiVersion"`
	Kind       string  `yaml:"kind"`
	Routes     []Route `yaml:"routes"`
}

// Route gives the pods of some namespaces to a release.
type Route struct {
	// Release names the release whose manifest judges the route's pods.
	Release string `yaml:"release"`
	// Channel is the store channel to follow ("": the default channel the
	// caller gives).
	Channel string `yaml:"channel,omitempty"`
	// Namespaces the route applies to; none: every namespace.
	Namespaces []string `yaml:"namespaces,omitempty"`
	// Repositories the release governs in those namespaces, whether or
	// not its manifest pins them (an image of one that the manifest does
	// not pin is denied, whatever Unmanaged says); none: the repositories
	// the release's manifest pins.
	Repositories []string `yaml:"repositories,omitempty"`
}

// RoutesError is a routes file that cannot be used: it does not parse, or
// a route is invalid. It is invalid input.
type RoutesError struct {
	// Route is the route's index (from 0), or -1 for the file as a whole.
	Route  int
	Reason string
	Err    error
}

func (e *RoutesError) Error() string {
	if e.Route < 0 {
		return "routes: " + e.Reason
	}
	return fmt.Sprintf("routes[%d]: %s", e.Route, e.Reason)
}

func (e *RoutesError) Unwrap() error { return e.Err }

// InvalidInput marks a RoutesError as bad input (exit 2).
func (e *RoutesError) InvalidInput() bool { return true }

// ParseRoutes decodes a routes file strictly (unknown fields, a second
// document or a file over MaxRoutesSize are errors) and validates it with
// names: release names, namespace names (RFC 1123 labels) and repository
// names. It returns a *RoutesError.
func ParseRoutes(data []byte, names imagename.Names) (*Routes, error) {
	if len(data) > MaxRoutesSize {
		return nil, &RoutesError{Route: -1, Reason: fmt.Sprintf("over %d bytes", MaxRoutesSize)}
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	var r Routes
	if err := dec.Decode(&r); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, &RoutesError{Route: -1, Reason: "empty"}
		}
		return nil, &RoutesError{Route: -1, Reason: err.Error(), Err: err}
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		return nil, &RoutesError{Route: -1, Reason: "more than one YAML document"}
	}
	if r.APIVersion != RoutesAPIVersion || r.Kind != RoutesKind {
		return nil, &RoutesError{Route: -1, Reason: fmt.Sprintf("apiVersion %q, kind %q: want %s, %s", r.APIVersion, r.Kind, RoutesAPIVersion, RoutesKind)}
	}
	if len(r.Routes) == 0 {
		return nil, &RoutesError{Route: -1, Reason: "no routes"}
	}
	for i, rt := range r.Routes {
		bad := func(format string, args ...any) error {
			return &RoutesError{Route: i, Reason: fmt.Sprintf(format, args...)}
		}
		if err := manifest.ValidateName(rt.Release); err != nil {
			return nil, bad("release: %v", err)
		}
		if rt.Channel != "" {
			if err := manifest.ValidateName(rt.Channel); err != nil {
				return nil, bad("channel: %v", err)
			}
		}
		seen := map[string]bool{}
		for _, ns := range rt.Namespaces {
			if errs := validation.IsDNS1123Label(ns); len(errs) > 0 {
				return nil, bad("namespace %q: %s", ns, strings.Join(errs, "; "))
			}
			if seen[ns] {
				return nil, bad("namespace %q twice", ns)
			}
			seen[ns] = true
		}
		for _, repo := range rt.Repositories {
			n, err := names.Repository(repo)
			if err != nil {
				return nil, bad("repository %q: %v", repo, err)
			}
			if seen["repo "+n] {
				return nil, bad("repository %q twice", repo)
			}
			seen["repo "+n] = true
		}
	}
	return &r, nil
}

// route is a Route as the handler uses it: its namespaces as a set (nil:
// every namespace), its repositories normalised (nil: the manifest's), and
// its manifests.
type route struct {
	release    string
	namespaces map[string]bool
	repos      map[string]bool
	m          Manifests
}

func (r *route) appliesTo(namespace string) bool {
	return r.namespaces == nil || r.namespaces[namespace]
}

// governs reports whether r judges repo (normalised), given its current
// manifest a.
func (r *route) governs(a *Accepted, repo string) bool {
	if r.repos != nil {
		return r.repos[repo]
	}
	return len(a.repos[repo]) > 0
}

// RoutedManifests is one route's manifests: the Route, and where its
// manifest comes from (a Follower of the release's channel).
type RoutedManifests struct {
	Route
	Manifests Manifests
}

func newRoutes(rs []RoutedManifests, names imagename.Names) ([]*route, error) {
	out := make([]*route, len(rs))
	for i, r := range rs {
		if r.Manifests == nil {
			return nil, &RoutesError{Route: i, Reason: "no manifest source"}
		}
		rt := &route{release: r.Release, m: r.Manifests}
		if len(r.Namespaces) > 0 {
			rt.namespaces = map[string]bool{}
			for _, ns := range r.Namespaces {
				rt.namespaces[ns] = true
			}
		}
		if len(r.Repositories) > 0 {
			rt.repos = map[string]bool{}
			for _, repo := range r.Repositories {
				n, err := names.Repository(repo)
				if err != nil {
					return nil, &RoutesError{Route: i, Reason: fmt.Sprintf("repository %q: %v", repo, err)}
				}
				rt.repos[n] = true
			}
		}
		out[i] = rt
	}
	return out, nil
}
