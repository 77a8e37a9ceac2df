package running_test

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"syscall"
	"testing"

	"github.com/opencontainers/go-digest"
	"github.com/opencontainers/image-spec/identity"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"

	"github.com/lockstep-dev/lockstep/admission"
	"github.com/lockstep-dev/lockstep/admission/running"
	"github.com/lockstep-dev/lockstep/manifest"
	"github.com/lockstep-dev/lockstep/verdict"
)

// contentIndex is an index of two platforms' images in a content store, as
// containerd holds it.
type contentIndex struct {
	blobs               map[digest.Digest][]byte
	index               ocispec.Descriptor
	manifests, configs  map[string]digest.Digest // by arch
	chains              map[string]digest.Digest
	hostArch, otherArch string
	hostPlat, otherPlat string
}

func newContentIndex(t *testing.T) *contentIndex {
	t.Helper()
	c := &contentIndex{blobs: map[digest.Digest][]byte{}, manifests: map[string]digest.Digest{}, configs: map[string]digest.Digest{},
		chains: map[string]digest.Digest{}, hostArch: runtime.GOARCH, otherArch: "arm64"}
	if c.hostArch == "arm64" {
		c.otherArch = "amd64"
	}
	c.hostPlat, c.otherPlat = "linux/"+c.hostArch, "linux/"+c.otherArch
	put := func(mediaType string, v any) ocispec.Descriptor {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		d := digest.FromBytes(b)
		c.blobs[d] = b
		return ocispec.Descriptor{MediaType: mediaType, Digest: d, Size: int64(len(b))}
	}
	var idx ocispec.Index
	idx.SchemaVersion, idx.MediaType = 2, ocispec.MediaTypeImageIndex
	for _, arch := range []string{c.hostArch, c.otherArch} {
		diff := digest.FromString("layer of " + arch)
		cfg := put(ocispec.MediaTypeImageConfig, ocispec.Image{Platform: ocispec.Platform{OS: "linux", Architecture: arch},
			RootFS: ocispec.RootFS{Type: "layers", DiffIDs: []digest.Digest{diff}}})
		m := put(ocispec.MediaTypeImageManifest, ocispec.Manifest{MediaType: ocispec.MediaTypeImageManifest, Config: cfg,
			Layers: []ocispec.Descriptor{{MediaType: ocispec.MediaTypeImageLayer, Digest: digest.FromString("blob of " + arch), Size: 1}}})
		m.Platform = &ocispec.Platform{OS: "linux", Architecture: arch}
		idx.Manifests = append(idx.Manifests, m)
		c.manifests[arch], c.configs[arch], c.chains[arch] = m.Digest, cfg.Digest, identity.ChainID([]digest.Digest{diff})
	}
	// An attestation entry, as BuildKit writes: never a candidate.
	att := put(ocispec.MediaTypeImageManifest, ocispec.Manifest{MediaType: ocispec.MediaTypeImageManifest})
	att.Platform = &ocispec.Platform{OS: "unknown", Architecture: "unknown"}
	idx.Manifests = append(idx.Manifests, att)
	c.index = put(ocispec.MediaTypeImageIndex, idx)
	return c
}

// TestContainerdPlatform checks which platform of an index the containerd
// source reports: the one whose layers chain to the container's snapshot,
// never the index's best guess, and none when nothing chains.
func TestContainerdPlatform(t *testing.T) {
	ctx := context.Background()
	c := newContentIndex(t)
	for _, arch := range []string{c.hostArch, c.otherArch} {
		m, cfg, p, err := running.ResolvePlatform(ctx, c.blobs, c.index, c.chains[arch])
		if err != nil || m != c.manifests[arch] || cfg != c.configs[arch] || p != "linux/"+arch {
			t.Errorf("chain of %s: ResolvePlatform = %s, %s, %q, %v; want %s, %s, linux/%s", arch, m, cfg, p, err, c.manifests[arch], c.configs[arch], arch)
		}
	}
	// No snapshot: the platform containerd would pick, this host's.
	if m, _, p, err := running.ResolvePlatform(ctx, c.blobs, c.index, ""); err != nil || m != c.manifests[c.hostArch] || p != c.hostPlat {
		t.Errorf("no chain: ResolvePlatform = %s, %q, %v; want this host's", m, p, err)
	}
	// A single manifest as the target.
	single := ocispec.Descriptor{MediaType: ocispec.MediaTypeImageManifest, Digest: c.manifests[c.hostArch], Size: int64(len(c.blobs[c.manifests[c.hostArch]]))}
	if m, _, _, err := running.ResolvePlatform(ctx, c.blobs, single, c.chains[c.hostArch]); err != nil || m != single.Digest {
		t.Errorf("a manifest target: ResolvePlatform = %s, %v", m, err)
	}
	// The record re-pointed: the snapshot chains to none of its platforms.
	if _, _, _, err := running.ResolvePlatform(ctx, c.blobs, c.index, digest.FromString("another image")); !errors.Is(err, running.ErrImageChanged) {
		t.Errorf("a foreign chain: ResolvePlatform error = %v, want ErrImageChanged", err)
	}
	if _, _, _, err := running.ResolvePlatform(ctx, c.blobs, single, c.chains[c.otherArch]); !errors.Is(err, running.ErrImageChanged) {
		t.Errorf("a manifest target of another chain: ResolvePlatform error = %v, want ErrImageChanged", err)
	}
	// The other platform never pulled (as containerd pulls): skipped.
	partial := map[digest.Digest][]byte{}
	for d, b := range c.blobs {
		if d != c.manifests[c.otherArch] {
			partial[d] = b
		}
	}
	if _, _, _, err := running.ResolvePlatform(ctx, partial, c.index, c.chains[c.otherArch]); !errors.Is(err, running.ErrImageChanged) {
		t.Errorf("the chain's platform not in the store: ResolvePlatform error = %v, want ErrImageChanged", err)
	}
	// A blob whose bytes are not its digest's: an error, never a reading.
	tampered := map[digest.Digest][]byte{}
	for d, b := range c.blobs {
		tampered[d] = b
	}
	tampered[c.configs[c.hostArch]] = []byte(`{"architecture":"` + c.hostArch + `","os":"linux","rootfs":{"type":"layers","diff_ids":[]}}`)
	if _, _, _, err := running.ResolvePlatform(ctx, tampered, c.index, c.chains[c.hostArch]); err == nil || errors.Is(err, running.ErrImageChanged) {
		t.Errorf("a tampered config: ResolvePlatform error = %v, want a digest error", err)
	}
}

// TestContainerdPlatformGate checks the gate's rules on what the
// containerd source reports: the other platform's image of the index (a
// container unpacked for another platform) refuses, though the index
// digest is the same.
func TestContainerdPlatformGate(t *testing.T) {
	c := newContentIndex(t)
	obs := func(arch string) *running.Observation {
		m, cfg, p, err := running.ResolvePlatform(context.Background(), c.blobs, c.index, c.chains[arch])
		if err != nil {
			t.Fatal(err)
		}
		return &running.Observation{Source: "containerd:default/web", ImageID: manifest.MustParseDigest(cfg.String()),
			RepoDigests: []manifest.Digest{manifest.MustParseDigest(c.index.Digest.String()), manifest.MustParseDigest(m.String())}, Platform: p}
	}
	var plats []manifest.Platform
	for _, arch := range []string{c.hostArch, c.otherArch} {
		plats = append(plats, manifest.Platform{OS: "linux", Architecture: arch,
			Digest: manifest.MustParseDigest(c.manifests[arch].String()), Config: manifest.MustParseDigest(c.configs[arch].String())})
	}
	im := &manifest.Image{Name: "web", Ref: "registry.example/web:v1", Digest: manifest.MustParseDigest(c.index.Digest.String()), Platforms: plats}
	if match, f := admission.Match(im, obs(c.hostArch), c.hostPlat); f != nil || match != "config" {
		t.Errorf("this host's image: Match = %q, %+v; want config", match, f)
	}
	if match, f := admission.Match(im, obs(c.otherArch), c.hostPlat); f == nil || f.Kind != admission.KindImageDigestMismatch {
		t.Errorf("the other platform's image on this host's gate: Match = %q, %+v; want image-digest-mismatch", match, f)
	}
}

// TestRuntimeSocketsNotYet checks that a containerd or CRI socket that is
// absent, or that nothing listens on, is an *verdict.UnavailableError
// keeping its cause (ENOENT, ECONNREFUSED): what the gate waits out until
// its deadline, then exit 3.
func TestRuntimeSocketsNotYet(t *testing.T) {
	dir, err := os.MkdirTemp("", "rtsock")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	stale := filepath.Join(dir, "stale.sock")
	l, err := net.Listen("unix", stale)
	if err != nil {
		t.Fatal(err)
	}
	l.(*net.UnixListener).SetUnlinkOnClose(false)
	l.Close()
	for _, tt := range []struct {
		sock string
		want error
	}{{filepath.Join(dir, "absent.sock"), syscall.ENOENT}, {stale, syscall.ECONNREFUSED}} {
		for _, spec := range []string{"containerd:web", "cri:web"} {
			src, err := running.Parse(spec, running.Options{ContainerdAddress: tt.sock, CRIEndpoint: tt.sock})
			if err != nil {
				t.Fatal(err)
			}
			_, err = src.Observe(context.Background())
			if !verdict.IsUnavailable(err) || !errors.Is(err, tt.want) {
				t.Errorf("%s on %s: Observe error = %v, want unavailable and %v", spec, filepath.Base(tt.sock), err, tt.want)
			}
		}
	}
}

// containerdRecording is testdata/containerd.json: what the real
// containerd held for a running container in TestRealRuntimes.
type containerdRecording struct {
	Target ocispec.Descriptor       `json:"target"`
	Chain  digest.Digest            `json:"chain"`
	Blobs  map[digest.Digest][]byte `json:"blobs"`
	Want   running.Observation      `json:"want"`
}

func readContainerdRecording(t *testing.T) *containerdRecording {
	t.Helper()
	var rec containerdRecording
	readRecording(t, "testdata/containerd.json", &rec)
	return &rec
}

// TestRecordedContainerd walks what the real containerd 1.6 held for a
// running container in TestRealRuntimes (testdata/containerd.json,
// rewritten by -record-runtimes: the image target, the snapshot's parent,
// the content store's blobs but layers) and checks it reads the
// manifest, config and platform the source read from the daemon.
func TestRecordedContainerd(t *testing.T) {
	rec := readContainerdRecording(t)
	if rec.Want.ImageID.IsZero() || len(rec.Want.RepoDigests) != 2 || rec.Chain == "" {
		t.Fatal("testdata/containerd.json holds no observation or no chain")
	}
	m, cfg, p, err := running.ResolvePlatform(context.Background(), rec.Blobs, rec.Target, rec.Chain)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.String() != rec.Want.ImageID.String() || m.String() != rec.Want.RepoDigests[1].String() || p != rec.Want.Platform ||
		rec.Target.Digest.String() != rec.Want.RepoDigests[0].String() {
		t.Errorf("ResolvePlatform = %s, %s, %q (target %s); the daemon's reading was %+v", m, cfg, p, rec.Target.Digest, rec.Want)
	}
	if _, _, _, err := running.ResolvePlatform(context.Background(), rec.Blobs, rec.Target, digest.FromString("moved")); !errors.Is(err, running.ErrImageChanged) {
		t.Errorf("another chain: %v, want ErrImageChanged", err)
	}
}
