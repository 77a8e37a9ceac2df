package webhook

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"slices"
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
	// Namespaces the route applies to; the key left out: every namespace.
	// An empty list (or null) in a routes file is refused: it is not
	// "every namespace".
	Namespaces []string `yaml:"namespaces,omitempty"`
	// Repositories the release governs in those namespaces, whether or
	// not its manifest pins them (an image of one that the manifest does
	// not pin is denied, whatever Unmanaged says); the key left out: the
	// repositories the release's manifest pins. An empty list (or null) in
	// a routes file is refused.
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
	if err := emptyLists(data); err != nil {
		return nil, err
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
	if err := overlaps(r.Routes, names); err != nil {
		return nil, err
	}
	return &r, nil
}

// emptyLists refuses a route whose namespaces or repositories key is
// there with nothing in it (an empty sequence, null, or an alias of one):
// leaving the key out means "every namespace" or "what the manifest
// pins", and an emptied list must never silently widen to that.
func emptyLists(data []byte) error {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil || len(doc.Content) == 0 {
		return nil // the strict decode already judged the document
	}
	routes := value(doc.Content[0], "routes")
	if routes == nil || routes.Kind != yaml.SequenceNode {
		return nil
	}
	for i, rt := range routes.Content {
		rt = deref(rt)
		if rt.Kind != yaml.MappingNode {
			continue
		}
		for _, key := range []string{"namespaces", "repositories"} {
			v := value(rt, key)
			if v == nil {
				continue
			}
			if v.Kind == yaml.ScalarNode && v.Tag == "!!null" || v.Kind == yaml.SequenceNode && len(v.Content) == 0 {
				meaning := "every namespace"
				if key == "repositories" {
					meaning = "the repositories its manifest pins"
				}
				return &RoutesError{Route: i, Reason: fmt.Sprintf("%s: an empty list is not allowed (leave the key out for %s)", key, meaning)}
			}
		}
	}
	return nil
}

// value returns the value of key in mapping m (aliases followed), or nil.
func value(m *yaml.Node, key string) *yaml.Node {
	m = deref(m)
	if m.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return deref(m.Content[i+1])
		}
	}
	return nil
}

func deref(n *yaml.Node) *yaml.Node {
	for depth := 0; n.Kind == yaml.AliasNode && n.Alias != nil && depth < 100; depth++ {
		n = n.Alias
	}
	return n
}

// overlaps refuses two routes that would both govern one repository in
// one namespace, so that which release judges an image never depends on
// the routes' order: their namespaces meet (a route without namespaces
// meets every one) and their repositories are known to meet (both list
// one, or neither lists any and both route the same release, whose
// manifest pins the same repositories). Two routes of different releases
// where one leaves its repositories to its manifest cannot be judged
// before the manifests load: the handler denies an image that two routes
// govern (KindRoutesOverlap).
func overlaps(rs []Route, names imagename.Names) error {
	norm := func(r Route) map[string]bool {
		out := map[string]bool{}
		for _, repo := range r.Repositories {
			if n, err := names.Repository(repo); err == nil {
				out[n] = true
			}
		}
		return out
	}
	for i := range rs {
		for j := i + 1; j < len(rs); j++ {
			a, b := rs[i], rs[j]
			ns, ok := meet(a.Namespaces, b.Namespaces)
			if !ok {
				continue
			}
			where := "every namespace"
			if ns != "" {
				where = "namespace " + ns
			}
			switch {
			case len(a.Repositories) > 0 && len(b.Repositories) > 0:
				ra, rb := norm(a), norm(b)
				for _, repo := range b.Repositories {
					if n, err := names.Repository(repo); err == nil && ra[n] && rb[n] {
						return &RoutesError{Route: j, Reason: fmt.Sprintf("overlaps routes[%d]: both give repository %s in %s (to releases %s and %s); make their namespaces or repositories disjoint", i, n, where, a.Release, b.Release)}
					}
				}
			case len(a.Repositories) == 0 && len(b.Repositories) == 0 && a.Release == b.Release:
				return &RoutesError{Route: j, Reason: fmt.Sprintf("overlaps routes[%d]: both give release %s's repositories in %s (channels %q and %q); make their namespaces disjoint", i, a.Release, where, a.Channel, b.Channel)}
			}
		}
	}
	return nil
}

// meet reports whether two namespace lists (none: every namespace) share
// a namespace, and one they share ("" when both are every namespace).
func meet(a, b []string) (string, bool) {
	switch {
	case len(a) == 0 && len(b) == 0:
		return "", true
	case len(a) == 0:
		return b[0], true
	case len(b) == 0:
		return a[0], true
	}
	for _, x := range a {
		if slices.Contains(b, x) {
			return x, true
		}
	}
	return "", false
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
