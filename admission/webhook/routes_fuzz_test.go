package webhook

import (
	"errors"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/lockstep-dev/lockstep/internal/imagename"
)

// FuzzRoutes feeds ParseRoutes arbitrary files, seeded with good and bad
// ones: it never panics, answers an error only as a *RoutesError, and
// never accepts a file in which a route's namespaces or repositories key
// holds an empty list or null (read independently of ParseRoutes, as a
// plain YAML tree), nor two routes that give one repository in one
// namespace.
func FuzzRoutes(f *testing.F) {
	const head = "apiVersion: lockstep.dev/v1\nkind: WebhookRoutes\n"
	for _, s := range []string{
		head + "routes: [{release: a}]\n",
		head + "routes: [{release: a, namespaces: []}]\n",
		head + "routes: [{release: a, namespaces: ~}]\n",
		head + "routes: [{release: a, repositories: []}]\n",
		head + "e: &e []\nroutes: [{release: a, namespaces: *e}]\n",
		head + "routes:\n  - release: a\n    namespaces: [x]\n  - release: b\n    namespaces: [x, y]\n    repositories: [r.test/p]\n",
		head + "routes:\n  - {release: a, repositories: [r.test/p]}\n  - {release: b, namespaces: [x], repositories: [r.test/p]}\n",
		head + "routes: [{release: a, namespaces: [x]}, {release: a, channel: c}]\n",
	} {
		f.Add([]byte(s))
	}
	names, err := imagename.New(nil)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := ParseRoutes(data, names)
		if err != nil {
			var re *RoutesError
			if !errors.As(err, &re) {
				t.Fatalf("ParseRoutes error %T %v, want a *RoutesError", err, err)
			}
			return
		}
		var doc map[string]any
		if err := yaml.Unmarshal(data, &doc); err != nil {
			t.Fatalf("accepted a file that does not unmarshal: %v", err)
		}
		list, _ := doc["routes"].([]any)
		for i, x := range list {
			m, _ := x.(map[string]any)
			for _, key := range []string{"namespaces", "repositories"} {
				v, there := m[key]
				if !there {
					continue
				}
				if l, ok := v.([]any); v == nil || ok && len(l) == 0 {
					t.Fatalf("accepted routes[%d] with an empty %s: %q", i, key, data)
				}
			}
		}
		for i, a := range r.Routes {
			for _, b := range r.Routes[i+1:] {
				if _, meets := meet(a.Namespaces, b.Namespaces); !meets {
					continue
				}
				for _, x := range a.Repositories {
					for _, y := range b.Repositories {
						nx, _ := names.Repository(x)
						ny, _ := names.Repository(y)
						if nx == ny {
							t.Fatalf("accepted two routes giving %s in one namespace: %q", nx, data)
						}
					}
				}
			}
		}
	})
}
