package app

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lockstep-dev/lockstep/internal/testkit/memregistry"
	"github.com/lockstep-dev/lockstep/internal/testkit/sigtest"
	"github.com/lockstep-dev/lockstep/internal/testkit/storetest"
	"github.com/lockstep-dev/lockstep/manifest"
	"github.com/lockstep-dev/lockstep/manifest/filestore"
	"github.com/lockstep-dev/lockstep/manifest/store"
)

// Class 8 of issue 35: one writer for a manifest on disk. Every command
// that writes a manifest file (record, sign, rollback --output, manifest
// get --output) goes through manifest.WriteFile: over a signed manifest of
// other bytes, the new file never keeps the old .sig or bundle beside it,
// and the manifest is written last. Each case first leaves a signed
// manifest (with its .sig and .sigstore.json) at the path, then runs the
// real CLI, and asserts the exit code and the sidecars left beside it.
func TestAttackWriter(t *testing.T) {
	t.Parallel()
	reg := memregistry.Start()
	defer reg.Close()
	if _, err := memregistry.PushImage(reg.Ref("store/web:v1"), 128); err != nil {
		t.Fatal(err)
	}
	pw := []string{"COSIGN_PASSWORD=" + sigtest.CosignPassword}
	keys := filepath.Join(t.TempDir(), "k")
	if _, errs, code := lockstepRunIn(t, pw, "keygen", "--output-key-prefix", keys); code != 0 {
		t.Fatalf("keygen: %s", errs)
	}
	storeDir := t.TempDir()
	st, err := filestore.New(storeDir)
	if err != nil {
		t.Fatal(err)
	}
	for g := int64(1); g <= 2; g++ {
		if _, err := store.Publish(context.Background(), st, storetest.Manifest(t, "web", g, ""), "production", "test"); err != nil {
			t.Fatal(err)
		}
	}
	record := func(out string, more ...string) []string {
		return append([]string{"record", "--release", "web", "--generation", "9", "--image", "web=" + reg.Ref("store/web:v1"), "--output", out}, more...)
	}
	for _, tc := range []struct {
		name string
		args func(path string) []string
		// sig and bundle: whether the file must have them beside it after.
		sig, bundle bool
	}{
		{"record, unsigned, over a signed manifest", func(p string) []string { return record(p) }, false, false},
		{"record, signed with a key, over a keyless-signed manifest", func(p string) []string { return record(p, "--sign-key", keys+".key") }, true, false},
		{"record, signed with a bundle elsewhere", func(p string) []string {
			return record(p, "--sign-key", keys+".key", "--bundle", p+".elsewhere.json")
		}, true, false},
		{"rollback --output, unsigned, over a signed manifest", func(p string) []string {
			return []string{"rollback", "--allow-unsigned", "--store", storeDir, "--release", "web", "--to", "1", "--output", p}
		}, false, false},
		{"manifest get --output, unsigned, over a signed manifest", func(p string) []string {
			return []string{"manifest", "get", "--insecure-allow-unsigned", "--store", storeDir, "--release", "web", "--output", p}
		}, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "release.json")
			old := storetest.Signed(storetest.Manifest(t, "web", 7, "old"))
			for name, data := range map[string][]byte{p: old.Raw, p + ".sig": old.Signature, p + ".sigstore.json": old.Bundle} {
				if err := os.WriteFile(name, data, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			args := tc.args(p)
			out, errs, code := lockstepRunIn(t, pw, args...)
			if code != 0 {
				t.Fatalf("%q: exit %d\n%s\n%s", args, code, out, errs)
			}
			raw, err := os.ReadFile(p)
			if err != nil || bytes.Equal(raw, old.Raw) {
				t.Fatalf("%q left the old manifest (%v)", args, err)
			}
			for suffix, want := range map[string]bool{".sig": tc.sig, ".sigstore.json": tc.bundle} {
				b, err := os.ReadFile(p + suffix)
				if got := err == nil; got != want {
					t.Errorf("%q: %s beside the new manifest: %v, want %v", args, suffix, got, want)
				}
				if err == nil && (bytes.Equal(b, old.Signature) || bytes.Equal(b, old.Bundle)) {
					t.Errorf("%q kept the old manifest's %s beside the new one", args, suffix)
				}
			}
			entries, _ := os.ReadDir(filepath.Dir(p))
			for _, e := range entries {
				if strings.Contains(e.Name(), ".tmp-") {
					t.Errorf("%q left a temporary file %s", args, e.Name())
				}
			}
			if tc.sig {
				if _, errs, code := lockstepRunIn(t, pw, "manifest", "verify", "--key", keys+".pub", p); code != 0 {
					t.Errorf("the new manifest does not verify with its new signature: %s", errs)
				}
			}
		})
	}

	// sign over an existing manifest: its bytes stay, its new signature is
	// written, and a bundle of those same bytes stays beside it.
	t.Run("sign keeps what belongs to the same bytes", func(t *testing.T) {
		p := filepath.Join(t.TempDir(), "release.json")
		m := storetest.Manifest(t, "web", 3, "")
		os.WriteFile(p, m.Raw, 0o644)
		os.WriteFile(p+".sigstore.json", []byte(`{"same":"bytes"}`), 0o644)
		if _, errs, code := lockstepRunIn(t, pw, "sign", "--key", keys+".key", p); code != 0 {
			t.Fatalf("sign: %s", errs)
		}
		if raw, _ := os.ReadFile(p); !bytes.Equal(raw, m.Raw) {
			t.Error("sign rewrote the manifest's bytes")
		}
		if _, err := os.Stat(p + ".sigstore.json"); err != nil {
			t.Errorf("sign removed a bundle of the same bytes: %v", err)
		}
		if sig, err := os.ReadFile(p + ".sig"); err != nil || len(sig) == 0 {
			t.Errorf("sign wrote no signature beside the manifest: %v", err)
		}
	})
}

// WriteFile's order: sidecars, stale ones removed, the manifest last; a
// blank sidecar or one aimed at the manifest itself writes nothing.
func TestWriteFileRefusals(t *testing.T) {
	t.Parallel()
	p := filepath.Join(t.TempDir(), "m.json")
	m := storetest.Manifest(t, "web", 1, "")
	for _, tc := range []struct {
		name string
		s    *manifest.Signed
		at   manifest.SidecarPaths
	}{
		{"a blank signature", &manifest.Signed{Raw: m.Raw, Signature: []byte(" \n")}, manifest.SidecarPaths{}},
		{"a signature over the manifest", &manifest.Signed{Raw: m.Raw, Signature: []byte("sig")}, manifest.SidecarPaths{Signature: p}},
	} {
		if _, err := manifest.WriteFile(p, tc.s, tc.at); err == nil {
			t.Errorf("%s: WriteFile accepted it", tc.name)
		}
		if _, err := os.Stat(p); !os.IsNotExist(err) {
			t.Errorf("%s: the manifest was written", tc.name)
		}
	}
}
