// Package scenario builds the pieces of the boot gate's scenarios (the
// Epic 2021 re-push among them) for tests, benchmarks and the demo:
// content-addressed asset files, a page that references them, a release
// manifest, images pushed to a registry, and what an instance that pulled
// a tag would see in its runtime.
package scenario

import (
	"context"
	"fmt"
	"math/rand"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/lockstep-dev/lockstep/manifest"
)

// Assets returns n asset files of a build, keyed by content-addressed
// path (e.g. "js/chunk-0003.1a2b3c4d.js"); version makes the contents,
// and so the IDs, of two builds differ.
func Assets(version string, n int) map[string]string {
	exts := []string{"js", "css", "svg", "png"}
	files := map[string]string{}
	for i := range n {
		ext := exts[i%len(exts)]
		body := fmt.Sprintf("/* %s asset %d */ %s", version, i, strings.Repeat("x", 64+i%512))
		files[ID(fmt.Sprintf("%s/chunk-%04d.%s", ext, i, ext), body)] = body
	}
	return files
}

// ID content-addresses a path: "dir/name.ext" becomes
// "dir/name.<8 hex of sha256>.ext".
func ID(p, body string) string {
	h := manifest.SHA256([]byte(body)).Hex[:8]
	ext := path.Ext(p)
	return strings.TrimSuffix(p, ext) + "." + h + ext
}

// Paths returns the sorted paths of files.
func Paths(files map[string]string) []string {
	out := make([]string, 0, len(files))
	for p := range files {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}

// WriteFiles writes files under dir.
func WriteFiles(dir string, files map[string]string) error {
	for p, body := range files {
		full := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(full, []byte(body), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// Page returns an HTML page that references ids under cdnBase, each with
// the element its extension calls for.
func Page(cdnBase string, ids []string) string {
	base := strings.TrimSuffix(cdnBase, "/") + "/"
	var b strings.Builder
	b.WriteString("<!doctype html>\n<html><head><meta charset=utf-8><title>store</title>\n")
	var body strings.Builder
	for _, id := range ids {
		u := base + id
		switch path.Ext(id) {
		case ".css":
			fmt.Fprintf(&b, "<link rel=\"stylesheet\" href=\"%s\">\n", u)
		case ".js":
			fmt.Fprintf(&b, "<script type=\"module\" src=\"%s\"></script>\n", u)
		case ".woff2":
			fmt.Fprintf(&b, "<link rel=\"preload\" as=\"font\" href=\"%s\" crossorigin>\n", u)
		default:
			fmt.Fprintf(&body, "<img alt=\"\" src=\"%s\">\n", u)
		}
	}
	b.WriteString("</head><body>\n<h1>store</h1>\n")
	b.WriteString(body.String())
	b.WriteString("</body></html>\n")
	return b.String()
}

// Epoch is the createdAt of generation 0 of every scenario manifest:
// generation g was created g hours later. A manifest is a function of its
// arguments, never of the clock: two manifests built from the same
// arguments are the same bytes, however far apart they were built (the
// trusted state rightly refuses a second, different, manifest of an
// accepted generation).
var Epoch = time.Date(2026, time.January, 1, 0, 0, 0, 0, time.UTC)

// Manifest returns a valid release manifest of images and files under the
// CDN bases, created at Epoch plus generation hours.
func Manifest(release string, generation int64, images []manifest.Image, cdn []string, files map[string]string) (*manifest.Manifest, []byte, error) {
	m := &manifest.Manifest{
		APIVersion: manifest.APIVersion, Kind: manifest.Kind,
		Release: manifest.Release{Name: release, Generation: generation, CreatedAt: Epoch.Add(time.Duration(generation) * time.Hour)},
		Images:  images,
		Assets:  manifest.Assets{CDN: cdn},
	}
	for _, p := range Paths(files) {
		body := files[p]
		m.Assets.Files = append(m.Assets.Files, manifest.File{Path: p, Size: int64(len(body)), SHA256: manifest.SHA256([]byte(body)).Hex})
	}
	m.Assets.Fingerprint = manifest.Fingerprint(m.Assets.Files)
	raw, err := m.Encode()
	if err != nil {
		return nil, nil, err
	}
	return m, raw, nil
}

// Push pushes a random image under ref: a single image for one platform,
// an index for several ("linux/amd64", "linux/arm64"). seed makes it
// reproducible; two seeds give two different images. rt (optional) is
// the transport.
func Push(ctx context.Context, ref string, seed int64, rt http.RoundTripper, platforms ...string) error {
	r, err := name.ParseReference(ref, name.Insecure)
	if err != nil {
		return err
	}
	opts := []remote.Option{remote.WithContext(ctx)}
	if rt != nil {
		opts = append(opts, remote.WithTransport(rt))
	}
	var adds []mutate.IndexAddendum
	for i, p := range platforms {
		img, err := platformImage(seed+int64(i)*1000, p)
		if err != nil {
			return err
		}
		if len(platforms) == 1 {
			return remote.Write(r, img, opts...)
		}
		plat, _ := v1.ParsePlatform(p)
		adds = append(adds, mutate.IndexAddendum{Add: img, Descriptor: v1.Descriptor{Platform: plat}})
	}
	return remote.WriteIndex(r, mutate.AppendManifests(empty.Index, adds...), opts...)
}

func platformImage(seed int64, platform string) (v1.Image, error) {
	img, err := random.Image(512, 1, random.WithSource(rand.NewSource(seed)))
	if err != nil {
		return nil, err
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	p, err := v1.ParsePlatform(platform)
	if err != nil {
		return nil, err
	}
	cf = cf.DeepCopy()
	cf.OS, cf.Architecture, cf.Variant = p.OS, p.Architecture, p.Variant
	cf.Created = v1.Time{Time: time.Unix(seed, 0).UTC()}
	return mutate.ConfigFile(img, cf)
}

// Pulled is what a runtime reports after pulling a tag for a platform:
// the image ID (the config digest) and the repo digest (what the tag
// resolved to: the index, or the image manifest).
type Pulled struct {
	Reference  string
	ImageID    string
	RepoDigest string
	OS, Arch   string
}

// Pull resolves ref as a runtime would for platform ("linux/amd64").
func Pull(ctx context.Context, ref, platform string, rt http.RoundTripper) (*Pulled, error) {
	r, err := name.ParseReference(ref, name.Insecure)
	if err != nil {
		return nil, err
	}
	p, err := v1.ParsePlatform(platform)
	if err != nil {
		return nil, err
	}
	opts := []remote.Option{remote.WithContext(ctx), remote.WithPlatform(*p)}
	if rt != nil {
		opts = append(opts, remote.WithTransport(rt))
	}
	desc, err := remote.Get(r, opts...)
	if err != nil {
		return nil, err
	}
	img, err := desc.Image()
	if err != nil {
		return nil, err
	}
	cfg, err := img.ConfigName()
	if err != nil {
		return nil, err
	}
	return &Pulled{
		Reference:  ref,
		ImageID:    cfg.String(),
		RepoDigest: r.Context().Name() + "@" + desc.Digest.String(),
		OS:         p.OS, Arch: p.Architecture,
	}, nil
}
