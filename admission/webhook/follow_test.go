package webhook

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lockstep-dev/lockstep/manifest"
)

// TestFollowerRefresh walks a manifest file through the changes a store
// channel sees: a new generation takes effect; a lower generation, a badly
// signed, an unsigned, an invalid and an expired manifest, another release
// and a missing file are refused and the good one kept.
func TestFollowerRefresh(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "manifest.json")
	key, other := newKey(t), newKey(t)
	m := NewMetrics()
	var logs bytes.Buffer
	f, err := NewFollower(manifest.FileSource{Path: path}, FollowOptions{
		Verifier: keyVerifier{&key.PublicKey}, Metrics: m, Logger: newTestLogger(&logs),
		Now: func() time.Time { return createdAt.Add(time.Minute) },
	})
	if err != nil {
		t.Fatal(err)
	}
	if f.Manifest() != nil {
		t.Fatal("a manifest before the first refresh")
	}
	ctx := context.Background()

	writeManifest(t, path, testManifest(5), key)
	if a, err := f.Refresh(ctx); err != nil || a.Signed.Manifest.Release.Generation != 5 || a.Unsigned {
		t.Fatalf("first refresh: %v, %v; want generation 5, verified", a, err)
	}
	writeManifest(t, path, testManifest(7), key)
	if a, err := f.Refresh(ctx); err != nil || a.Signed.Manifest.Release.Generation != 7 {
		t.Fatalf("new generation: %v, %v; want generation 7", a, err)
	}
	if _, err := f.Refresh(ctx); err != nil {
		t.Fatalf("unchanged: %v", err)
	}

	expired := testManifest(9)
	exp := createdAt.Add(time.Second)
	expired.Release.ExpiresAt = &exp
	otherRelease := testManifest(9)
	otherRelease.Release.Name = "store-api"
	sameGeneration := testManifest(7)
	sameGeneration.Images = sameGeneration.Images[:1]
	refusals := []struct {
		name    string
		write   func()
		result  string
		errWant string
	}{
		{"lower generation", func() { writeManifest(t, path, testManifest(6), key) }, refreshRollback, "generation 6 is not newer than generation 7"},
		{"same generation, other document", func() { writeManifest(t, path, sameGeneration, key) }, refreshRollback, "generation 7 is not newer than generation 7"},
		{"signed by another key", func() { writeManifest(t, path, testManifest(8), other) }, refreshSignature, "invalid signature"},
		{"signature of another document", func() {
			writeManifest(t, path, testManifest(8), nil)
			if err := os.WriteFile(path+".sig", sign(t, key, encodeManifest(t, testManifest(7))), 0o644); err != nil {
				t.Fatal(err)
			}
		}, refreshSignature, "invalid signature"},
		{"unsigned", func() {
			writeManifest(t, path, testManifest(8), nil)
			os.Remove(path + ".sig")
		}, refreshSignature, "not signed"},
		{"invalid", func() { os.WriteFile(path, []byte(`{"apiVersion":"lockstep.dev/v1"}`), 0o644) }, refreshInvalid, "invalid manifest"},
		{"expired", func() { writeManifest(t, path, expired, key) }, refreshExpired, "store-web@9 expired at"},
		{"another release", func() { writeManifest(t, path, otherRelease, key) }, refreshRelease, `release "store-api" is not the release "store-web"`},
		{"missing", func() { os.Remove(path) }, refreshFetch, "no such file"},
	}
	for _, r := range refusals {
		r.write()
		a, err := f.Refresh(ctx)
		var re *RefusedError
		if !errors.As(err, &re) || re.Result != r.result || !strings.Contains(err.Error(), r.errWant) {
			t.Errorf("%s: err = %v, want a RefusedError %q containing %q", r.name, err, r.result, r.errWant)
		}
		if a == nil || a.Signed.Manifest.Release.Generation != 7 || f.Manifest().Signed.Manifest.Release.Generation != 7 {
			t.Errorf("%s: current manifest %v, want generation 7 kept", r.name, idOf(a))
		}
	}
	var ge *manifest.GenerationError
	writeManifest(t, path, testManifest(3), key)
	if _, err := f.Refresh(ctx); !errors.As(err, &ge) || ge.Have != 7 || ge.Offered != 3 {
		t.Errorf("rollback error %v, want a *manifest.GenerationError{Have: 7, Offered: 3}", err)
	}

	writeManifest(t, path, testManifest(10), key)
	if a, err := f.Refresh(ctx); err != nil || a.Signed.Manifest.Release.Generation != 10 {
		t.Fatalf("after the refusals, a good new generation: %v, %v", idOf(a), err)
	}
	metrics := scrape(t, m)
	for _, want := range []string{
		`lockstep_webhook_manifest_generation{release="store-web"} 10`,
		`lockstep_webhook_manifest_refreshes_total{result="loaded"} 3`,
		`lockstep_webhook_manifest_refreshes_total{result="unchanged"} 1`,
		`lockstep_webhook_manifest_refreshes_total{result="rollback"} 3`,
		`lockstep_webhook_manifest_refreshes_total{result="signature"} 3`,
		`lockstep_webhook_manifest_unsigned{release="store-web"} 0`,
	} {
		if !strings.Contains(metrics, want) {
			t.Errorf("metrics lack %s:\n%s", want, grep(metrics, "manifest"))
		}
	}
	if !strings.Contains(logs.String(), "manifest refused, keeping the current one") {
		t.Errorf("refusals are not logged:\n%s", logs.String())
	}
}

// TestFollowerNeedsVerifier checks that an unverified follower is refused
// unless unsigned manifests are allowed explicitly, and that such a
// manifest is marked unsigned.
func TestFollowerNeedsVerifier(t *testing.T) {
	path := filepath.Join(t.TempDir(), "manifest.json")
	if _, err := NewFollower(manifest.FileSource{Path: path}, FollowOptions{}); err == nil {
		t.Fatal("NewFollower without a verifier: no error")
	}
	f, err := NewFollower(manifest.FileSource{Path: path}, FollowOptions{AllowUnsigned: true})
	if err != nil {
		t.Fatal(err)
	}
	writeManifest(t, path, testManifest(1), nil)
	if a, err := f.Refresh(context.Background()); err != nil || !a.Unsigned {
		t.Fatalf("Refresh: %v, %v; want an unsigned manifest", a, err)
	}
}

// TestFollowerRun checks that Run picks up a manifest written after it
// started (retrying until the first one loads) and then a new generation
// on disk, without a restart.
func TestFollowerRun(t *testing.T) {
	path := filepath.Join(t.TempDir(), "manifest.json")
	f, err := NewFollower(manifest.FileSource{Path: path}, FollowOptions{AllowUnsigned: true})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { f.Run(ctx, 10*time.Millisecond); close(done) }()
	defer func() { cancel(); <-done }()

	waitFor := func(gen int64) {
		t.Helper()
		deadline := time.Now().Add(20 * time.Second)
		for time.Now().Before(deadline) {
			if a := f.Manifest(); a != nil && a.Signed.Manifest.Release.Generation == gen {
				return
			}
			time.Sleep(5 * time.Millisecond)
		}
		t.Fatalf("generation %d never loaded; have %s", gen, idOf(f.Manifest()))
	}
	writeManifest(t, path, testManifest(1), nil)
	waitFor(1)
	writeManifest(t, path, testManifest(2), nil)
	waitFor(2)
}

func TestJitter(t *testing.T) {
	for range 1000 {
		if d := jitter(30 * time.Second); d < 27*time.Second || d > 33*time.Second {
			t.Fatalf("jitter(30s) = %s, want within ±10%%", d)
		}
	}
}

// countingVerifier counts its calls.
type countingVerifier struct {
	keyVerifier
	calls *int
}

func (v countingVerifier) Verify(ctx context.Context, s *manifest.Signed) error {
	*v.calls++
	return v.keyVerifier.Verify(ctx, s)
}

// TestFollowerVerifiesOnce checks that an unchanged manifest is not
// verified again on every refresh, and that a new signature over the same
// bytes is.
func TestFollowerVerifiesOnce(t *testing.T) {
	path := filepath.Join(t.TempDir(), "manifest.json")
	key := newKey(t)
	calls := 0
	f, err := NewFollower(manifest.FileSource{Path: path}, FollowOptions{Verifier: countingVerifier{keyVerifier{&key.PublicKey}, &calls}})
	if err != nil {
		t.Fatal(err)
	}
	writeManifest(t, path, testManifest(1), key)
	for range 3 {
		if _, err := f.Refresh(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	if calls != 1 {
		t.Errorf("3 refreshes of one manifest: %d verifications, want 1", calls)
	}
	writeManifest(t, path, testManifest(1), newKey(t)) // same bytes, another (bad) signature
	if _, err := f.Refresh(context.Background()); err == nil || calls != 2 {
		t.Errorf("a new signature: err %v after %d verifications, want a refusal after 2", err, calls)
	}
}
