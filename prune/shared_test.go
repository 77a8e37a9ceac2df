package prune_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/lockstep-dev/lockstep/internal/testkit/storetest"
	"github.com/lockstep-dev/lockstep/manifest"
	"github.com/lockstep-dev/lockstep/manifest/store"
	"github.com/lockstep-dev/lockstep/prune"
	"github.com/lockstep-dev/lockstep/verdict"
)

// A symbolic link in the directory origin is neither followed nor
// deleted, even where a generation that is not kept lists its path: the
// file it points to, outside the origin, is untouched.
func TestDirSymlink(t *testing.T) {
	ctx := context.Background()
	s := newSite(t, dirOrigin(t))
	s.publish(1, assets(1))
	s.publish(2, assets(2))
	dir := s.o.Origin.(*prune.DirOrigin).String()
	outside := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(outside, []byte("app of generation 1"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(dir, "app-1.js")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(dir, "app-1.js")); err != nil {
		t.Fatal(err)
	}
	rep, err := prune.Run(ctx, s.st, "web", s.o, prune.Options{GCOptions: store.GCOptions{Keep: 1, Delete: true}, PruneUnknown: true})
	if err != nil {
		t.Fatal(err)
	}
	if r := reasons(rep.Kept)["app-1.js"]; r != prune.KeptIrregular || len(rep.Deleted) != 0 {
		t.Errorf("app-1.js kept for %q, deleted %v; want %q and nothing deleted", r, keys(rep.Deleted), prune.KeptIrregular)
	}
	if _, err := os.Lstat(filepath.Join(dir, "app-1.js")); err != nil {
		t.Errorf("the link: %v", err)
	}
	if b, err := os.ReadFile(outside); err != nil || string(b) != "app of generation 1" {
		t.Errorf("the file outside: %q, %v", b, err)
	}
}

// deleteHook runs before each Delete: after prune's last recheck.
type deleteHook struct {
	prune.Origin
	before func(key string)
}

func (d deleteHook) Delete(ctx context.Context, o prune.Object) error {
	d.before(o.Key)
	return d.Origin.Delete(ctx, o)
}

// apiManifest is generation gen of another release, "api", listing
// files already on the origin.
func apiManifest(t *testing.T, gen int64, files ...string) *manifest.Signed {
	s, err := storetest.NewManifest("api", gen, "")
	if err != nil {
		t.Fatal(err)
	}
	m := *s.Manifest
	var fs []manifest.File
	for _, f := range files {
		sum := sha256.Sum256([]byte("x"))
		fs = append(fs, manifest.File{Path: f, Size: 1, SHA256: hex.EncodeToString(sum[:])})
	}
	m.Assets = manifest.Assets{CDN: []string{"https://cdn.test/"}, Files: fs, Fingerprint: manifest.Fingerprint(fs)}
	raw, err := m.Indent()
	if err != nil {
		t.Fatal(err)
	}
	sg, err := manifest.NewSigned(raw, "test")
	if err != nil {
		t.Fatal(err)
	}
	return sg
}

// Another release shares the origin: a path its manifests list is never
// deleted, whether the manifest was there when prune planned or was
// published while it ran; and a manifest stored in the window between
// prune's last recheck and its delete is reported, never silent.
func TestSharedOrigin(t *testing.T) {
	ctx := context.Background()
	s := newSite(t, dirOrigin(t))
	for g := int64(1); g <= 4; g++ {
		s.publish(g, assets(g))
	}
	if _, err := store.Publish(ctx, s.st, apiManifest(t, 1, "app-1.js"), "production", "test"); err != nil {
		t.Fatal(err)
	}
	var once bool
	hooked := &hookStore{Store: s.st, onList: func() {
		if !once {
			once = true
			if _, err := store.Publish(ctx, s.st, apiManifest(t, 2, "app-2.js"), "production", "test"); err != nil {
				t.Error(err)
			}
		}
	}}
	all := prune.Options{GCOptions: store.GCOptions{Keep: 2, Delete: true}}
	rep, err := prune.Run(ctx, hooked, "web", s.o, all)
	if err != nil {
		t.Fatal(err)
	}
	r := reasons(rep.Kept)
	if r["app-1.js"] != prune.KeptOther || r["app-2.js"] != prune.KeptOther || len(rep.Deleted) != 0 {
		t.Fatalf("kept %v, deleted %v; want app-1.js and app-2.js kept for %q", r, keys(rep.Deleted), prune.KeptOther)
	}
	s.publish(5, assets(5))
	s.publish(6, assets(6))
	hit := false
	window := deleteHook{Origin: s.o, before: func(key string) {
		if key == "app-3.js" && !hit {
			hit = true
			if _, err := store.Publish(ctx, s.st, apiManifest(t, 3, "app-3.js"), "production", "test"); err != nil {
				t.Error(err)
			}
		}
	}}
	rep, err = prune.Run(ctx, s.st, "web", window, all)
	if !verdict.IsMismatch(err) || !strings.Contains(err.Error(), "app-3.js") || !strings.Contains(err.Error(), "upload the asset again") {
		t.Fatalf("a manifest stored between the recheck and the delete: err %v, want a mismatch naming app-3.js", err)
	}
	if rep == nil || !slices.Contains(keys(rep.Deleted), "app-3.js") {
		t.Errorf("the report does not list the deleted app-3.js: %+v", rep)
	}
}
