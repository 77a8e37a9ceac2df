package pin

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lockstep-dev/lockstep/internal/testkit/memregistry"
	"github.com/lockstep-dev/lockstep/manifest"
	"github.com/lockstep-dev/lockstep/verify/imagesig"
	"github.com/lockstep-dev/lockstep/verify/registry"
)

// memRegistry starts an in-memory registry on loopback and returns its
// host:port.
func memRegistry(t *testing.T) string {
	t.Helper()
	r := memregistry.Start()
	t.Cleanup(r.Close)
	return r.Host
}

// push pushes a new random image under ref.
func push(t *testing.T, ref string) {
	t.Helper()
	if _, err := memregistry.PushImage(ref, 64); err != nil {
		t.Fatal(err)
	}
}

// TestRunWrite pins what a file names, rewrites it, and refuses (writing
// nothing, reporting why) once the tag moved away from the file's digest.
func TestRunWrite(t *testing.T) {
	host := memRegistry(t)
	push(t, host+"/app:v1")
	compose := filepath.Join(t.TempDir(), "compose.yaml")
	in := "services:\n  app:\n    image: " + host + "/app:v1\n"
	if err := os.WriteFile(compose, []byte(in), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	r, err := Run(ctx, Options{Write: []string{compose}})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if len(r.Images) != 1 || !strings.HasPrefix(r.Images[0].Pinned, host+"/app:v1@sha256:") {
		t.Fatalf("Run: images %+v, want app:v1 pinned", r.Images)
	}
	pinned := r.Images[0].Pinned
	got, _ := os.ReadFile(compose)
	if want := strings.Replace(in, host+"/app:v1", pinned, 1); string(got) != want {
		t.Errorf("compose.yaml =\n%s\nwant\n%s", got, want)
	}
	if len(r.Written) != 1 || len(r.Written[0].Changes) != 1 || r.Written[0].Changes[0].New != pinned {
		t.Errorf("Run: written %+v, want the one change to %s", r.Written, pinned)
	}

	push(t, host+"/app:v1")
	before, _ := os.ReadFile(compose)
	r, err = Run(ctx, Options{Write: []string{compose}})
	if !registry.IsMovedTag(err) {
		t.Fatalf("Run after the tag moved: %v, want a moved tag", err)
	}
	if r == nil || len(r.Moved) != 1 || r.Moved[0].Allowed || len(r.Written) != 0 {
		t.Fatalf("Run after the tag moved: report %+v, want the moved tag, nothing written", r)
	}
	if after, _ := os.ReadFile(compose); !bytes.Equal(before, after) {
		t.Errorf("a refused Run changed the file")
	}
	r, err = Run(ctx, Options{Write: []string{compose}, Registry: registry.Options{AllowMoved: []string{host + "/app:v1"}}})
	if err != nil || len(r.Moved) != 1 || !r.Moved[0].Allowed || len(r.Written) != 1 {
		t.Errorf("Run with the move allowed: %v, report %+v; want it rewritten", err, r)
	}
}

func TestRunErrors(t *testing.T) {
	ctx := context.Background()
	var ve *manifest.ValidationError
	if r, err := Run(ctx, Options{}); !errors.As(err, &ve) || r != nil {
		t.Errorf("Run with nothing = %v, %v; want a *manifest.ValidationError", r, err)
	}
	missing := filepath.Join(t.TempDir(), "nope.yaml")
	called := false
	sigs := func(context.Context) (*imagesig.Verifier, error) { called = true; return nil, errors.New("no key") }
	var fe *FileError
	r, err := Run(ctx, Options{Write: []string{missing}, Requests: []registry.Request{{Ref: "127.0.0.1:1/app:v1"}}, Signatures: sigs})
	if !errors.As(err, &fe) || !errors.Is(err, fs.ErrNotExist) || !fe.InvalidInput() || r != nil || called {
		t.Errorf("Run with a missing file = %v, %v (Signatures called: %v); want a *FileError wrapping fs.ErrNotExist, before the verifier and any request", r, err, called)
	}
	if r, err := Run(ctx, Options{Requests: []registry.Request{{Ref: "127.0.0.1:1/app:v1"}}, Signatures: sigs}); err == nil || err.Error() != "no key" || r != nil {
		t.Errorf("Run with a verifier that fails = %v, %v; want its error, before any request", r, err)
	}
	var re *registry.ReferenceError
	if r, err := Run(ctx, Options{Requests: []registry.Request{{Ref: "UPPER/case:x"}}}); !errors.As(err, &re) || r != nil {
		t.Errorf("Run with a bad reference = %v, %v; want a *registry.ReferenceError and no report", r, err)
	}
}

func TestParseRequests(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want []registry.Request
		err  string
	}{
		{[]string{"nginx:1.27", "web=registry.example/web:v1"}, []registry.Request{{Ref: "nginx:1.27"}, {Name: "web", Ref: "registry.example/web:v1"}}, ""},
		{[]string{"a", "b"}, []registry.Request{{Ref: "a"}, {Ref: "b"}}, ""},
		{[]string{"Bad Name=x"}, nil, `image name in "Bad Name=x"`},
		{[]string{"web=a", "web=b"}, nil, `image name "web" is given twice`},
	} {
		got, err := ParseRequests(tc.args)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("ParseRequests(%q) = %v, %v; want an error containing %q", tc.args, got, err, tc.err)
			}
			continue
		}
		if err != nil || len(got) != len(tc.want) {
			t.Errorf("ParseRequests(%q) = %v, %v; want %v", tc.args, got, err, tc.want)
			continue
		}
		for i := range got {
			if got[i] != tc.want[i] {
				t.Errorf("ParseRequests(%q)[%d] = %v, want %v", tc.args, i, got[i], tc.want[i])
			}
		}
	}
}
