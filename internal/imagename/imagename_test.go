package imagename_test

import (
	"testing"

	"github.com/lockstep-dev/lockstep/internal/imagename"
)

func TestRepository(t *testing.T) {
	n, err := imagename.New([]string{"registry.internal=registry.example.com", "10.0.0.5:5000=registry.example.com:5000"})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct{ in, want string }{
		{"registry.example.com/web", "registry.example.com/web"},
		{"REGISTRY.Example.COM/web", "registry.example.com/web"},
		{"registry.example.com./web", "registry.example.com/web"},
		{"registry.example.com:443/web", "registry.example.com/web"},
		{"registry.example.com:80/web", "registry.example.com/web"},
		{"registry.example.com:5000/web", "registry.example.com:5000/web"},
		{"127.0.0.1:5000/web", "localhost:5000/web"},
		{"localhost:5000/web", "localhost:5000/web"},
		{"LOCALHOST:5000/web", "localhost:5000/web"},
		{"[::1]:5000/web", "localhost:5000/web"},
		{"[::ffff:127.0.0.1]:5000/web", "localhost:5000/web"},
		{"127.0.0.2:5000/web", "localhost:5000/web"},
		{"[::ffff:10.1.2.3]:5000/web", "10.1.2.3:5000/web"},
		{"registry.internal/web", "registry.example.com/web"},
		{"Registry.Internal./web", "registry.example.com/web"},
		{"10.0.0.5:5000/web", "registry.example.com:5000/web"},
		// Every spelling inet_aton accepts is its dotted quad.
		{"127.1:5000/web", "localhost:5000/web"},
		{"2130706433:5000/web", "localhost:5000/web"},
		{"0x7f000001:5000/web", "localhost:5000/web"},
		{"0x7F.1:5000/web", "localhost:5000/web"},
		{"0177.0.0.1:5000/web", "localhost:5000/web"},
		{"127.000.000.001:5000/web", "localhost:5000/web"},
		{"0x7f.0.00.1:5000/web", "localhost:5000/web"},
		{"10.1:5000/web", "10.0.0.1:5000/web"},
		{"012.0.0.1:5000/web", "10.0.0.1:5000/web"},
		{"167772161:5000/web", "10.0.0.1:5000/web"},
		{"0xa.0x0.0.01/web", "10.0.0.1/web"},
		{"10.9.2055:443/web", "10.9.8.7/web"},
		{"10.0.5:5000/web", "registry.example.com:5000/web"},
		{"0x0a000005:5000/web", "registry.example.com:5000/web"},
		{"nginx", "index.docker.io/library/nginx"},
		{"docker.io/library/nginx", "index.docker.io/library/nginx"},
		{"index.docker.io/library/nginx", "index.docker.io/library/nginx"},
		{"registry-1.docker.io/library/nginx", "index.docker.io/library/nginx"},
	}
	for _, tt := range tests {
		got, err := n.Repository(tt.in)
		if err != nil || got != tt.want {
			t.Errorf("Repository(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
		}
	}
	for _, bad := range []string{"1.2.3.4.5:5000/web", "256.0.0.1/web", "08.0.0.1/web", "1.2.65536:5000/web", "0x100000000:5000/web", "registry.0x1f/web", "registry.example.com../web", "[::1/web", "::1:5000/web", "registry.example.com:0/web", "registry.example.com:99999/web", "registry.example.com:05000/web"} {
		if got, err := n.Repository(bad); err == nil {
			t.Errorf("Repository(%q) = %q, want an error", bad, got)
		}
	}
}

func TestNewRefusesBadAliases(t *testing.T) {
	for _, a := range [][]string{{"a.example"}, {"a.example=a.example"}, {"a.example=b.example", "a.example=c.example"}, {"a.example=b.example", "b.example=c.example"}, {"=b.example"}} {
		if _, err := imagename.New(a); err == nil {
			t.Errorf("New(%q): want an error", a)
		}
	}
}

func TestReference(t *testing.T) {
	var n imagename.Names
	r, err := n.Reference("Registry.Example.com.:443/web:v1@sha256:" + "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef")
	if err != nil || r.Context().Name() != "registry.example.com/web" {
		t.Fatalf("Reference = %v, %v", r, err)
	}
	r, err = n.Reference("[::ffff:127.0.0.1]:5000/web:v1")
	if err != nil || r.Context().Name() != "localhost:5000/web" || r.Identifier() != "v1" {
		t.Fatalf("Reference = %v, %v", r, err)
	}
}
