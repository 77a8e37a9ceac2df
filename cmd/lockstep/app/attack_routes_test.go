package app

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Class 6 of issue 35: webhook routes mean what they say. An empty list
// in a route is not "everything", and two routes that would both judge
// one repository in one namespace are refused at load: the real CLI exits
// 2 naming the route (and both routes for an overlap), and starts nothing
// (no store directory is created).
func TestAttackRoutes(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cert, key, _ := webhookTestCert(t, dir)
	const head = "apiVersion: lockstep.dev/v1\nkind: WebhookRoutes\n"
	for _, tc := range []struct{ name, routes, want string }{
		{"namespaces: [] is not every namespace", head + "routes:\n  - release: web\n    namespaces: []\n", "routes[0]: namespaces: an empty list is not allowed"},
		{"namespaces: null", head + "routes:\n  - release: web\n    namespaces:\n", "routes[0]: namespaces: an empty list"},
		{"repositories: [] is not the manifest's", head + "routes:\n  - release: web\n    namespaces: [store]\n  - release: api\n    namespaces: [api]\n    repositories: []\n", "routes[1]: repositories: an empty list"},
		{"an empty list through an alias", head + "routes:\n  - release: web\n    namespaces: &none []\n", "routes[0]: namespaces: an empty list"},
		{"one repository given to two releases", head + "routes:\n  - release: web\n    repositories: [registry.example.com/shop/api]\n  - release: payments\n    namespaces: [pay]\n    repositories: [registry.example.com/shop/api]\n",
			"routes[1]: overlaps routes[0]: both give repository registry.example.com/shop/api in namespace pay (to releases web and payments)"},
		{"one release on two channels in one namespace", head + "routes:\n  - release: web\n    channel: canary\n    namespaces: [store]\n  - release: web\n", "routes[1]: overlaps routes[0]: both give release web's repositories in namespace store"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			routes := filepath.Join(t.TempDir(), "routes.yaml")
			if err := os.WriteFile(routes, []byte(tc.routes), 0o644); err != nil {
				t.Fatal(err)
			}
			storeDir := filepath.Join(t.TempDir(), "store")
			code, errs := runWebhookCLI(context.Background(), "webhook", "--listen", "127.0.0.1:0", "--tls-cert", cert, "--tls-key", key,
				"--insecure-allow-unsigned", "--store", storeDir, "--routes", routes)
			if code != ExitInvalid || !strings.Contains(errs, tc.want) {
				t.Errorf("exit %d, stderr %q; want 2 saying %q", code, errs, tc.want)
			}
			if _, err := os.Stat(storeDir); !os.IsNotExist(err) {
				t.Errorf("a refused routes file created the store: %v", err)
			}
		})
	}
}
