package store_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/lockstep-dev/lockstep/internal/testkit/storetest"
	"github.com/lockstep-dev/lockstep/manifest"
	"github.com/lockstep-dev/lockstep/manifest/filestore"
	"github.com/lockstep-dev/lockstep/manifest/store"
	"github.com/lockstep-dev/lockstep/verdict"
	"github.com/lockstep-dev/lockstep/verify/fleet"
)

// gc --in-use keeps what the instances actually run, read from a fleet
// report (the real type, as `lockstep fleet check --format json` writes
// it): the manifest they are checked against, a manifest whose image a
// divergent instance still runs (by its config digest, the image ID a
// runtime reports), and a manifest of the generation an unreachable
// instance last admitted. The rest of the old ones go.
func TestGCKeepsWhatRuns(t *testing.T) {
	ctx := context.Background()
	st, err := filestore.New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	var ms []*manifest.Signed
	for g := int64(1); g <= 6; g++ {
		m := storetest.Manifest(t, "web", g, "")
		if _, err := store.Publish(ctx, st, m, "production", "test"); err != nil {
			t.Fatal(err)
		}
		ms = append(ms, m)
	}
	g := func(n int) *manifest.Signed { return ms[n-1] }
	rep := fleet.Report{
		APIVersion: "lockstep.dev/v1", Kind: "FleetReport",
		Manifest: fleet.ManifestRef{Release: "web", Generation: 6, Digest: g(6).Digest.String()},
		Groups: []fleet.Group{
			{Running: g(6).Manifest.Images[0].Platforms[0].Digest.String(), Generation: 6, Match: true, Count: 3, Instances: []string{"i-1", "i-2", "i-3"}},
			{Running: g(2).Manifest.Images[0].Platforms[0].Config.String(), Generation: 6, Count: 1, Instances: []string{"i-4"}},
		},
		Divergent:   []fleet.Instance{{Name: "i-4", Running: g(2).Manifest.Images[0].Platforms[0].Config.String(), Release: "web", Generation: 6}},
		Unreachable: []fleet.Instance{{Name: "i-5", Release: "web", Generation: 3}},
		InUse:       []fleet.InUse{{ManifestDigest: g(6).Digest.String(), Release: "web", Generation: 6, Instances: 4}},
	}
	b, err := json.Marshal(rep)
	if err != nil {
		t.Fatal(err)
	}
	inUse, err := store.ParseInUse(b)
	if err != nil {
		t.Fatal(err)
	}
	running, err := store.ParseRunning(b)
	if err != nil {
		t.Fatal(err)
	}
	// Without Running, only the checked-against manifest would be held.
	dry, err := store.GC(ctx, st, "web", store.GCOptions{Keep: 1, InUse: inUse})
	if err != nil {
		t.Fatal(err)
	}
	if len(dry.Deleted) != 5 {
		t.Fatalf("gc without Running would delete %d, want 5: %+v", len(dry.Deleted), dry)
	}
	got, err := store.GC(ctx, st, "web", store.GCOptions{Keep: 1, InUse: inUse, Running: running, Delete: true})
	if err != nil {
		t.Fatal(err)
	}
	kept := map[int64]string{}
	for _, e := range got.Kept {
		kept[e.Generation] = e.Reason
	}
	want := map[int64]string{6: store.KeptLive, 2: store.KeptImage, 3: store.KeptRunGen}
	for gen, reason := range want {
		if kept[gen] != reason {
			t.Errorf("generation %d kept for %q, want %q (kept: %v)", gen, kept[gen], reason, kept)
		}
	}
	if len(got.Deleted) != 3 {
		t.Errorf("deleted %+v, want generations 1, 4 and 5", got.Deleted)
	}
	for _, gen := range []int{2, 3} {
		if _, err := st.Get(ctx, "web", g(gen).Digest); err != nil {
			t.Errorf("generation %d is gone from the store: %v", gen, err)
		}
	}
	if _, err := st.Get(ctx, "web", g(1).Digest); err == nil {
		t.Error("generation 1, which nothing runs, is still there")
	}

	// A plain list of manifest digests has nothing running in it.
	if r, err := store.ParseRunning([]byte(`["` + g(1).Digest.String() + `"]`)); err != nil || len(r.Images) != 0 || len(r.Generations) != 0 {
		t.Errorf("ParseRunning(a digest list) = %+v, %v; want nothing", r, err)
	}
	var oe *verdict.OptionError
	if _, err := store.ParseRunning([]byte(`{"groups":[{"running":"sha256:nope"}]}`)); !errors.As(err, &oe) || oe.Option != "Running" {
		t.Errorf("ParseRunning(a running value that is not a digest) = %v, want an OptionError of Running", err)
	}
}
