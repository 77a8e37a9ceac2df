package manifest

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
)

// The versions of the format this package reads and writes. A manifest is
// written in the oldest version that holds every field it uses
// ((*Manifest).Version), so that a manifest without newer fields stays
// readable by older readers, which refuse unknown fields and versions.
const (
	// APIVersion is the first version, which every reader knows.
	APIVersion = "lockstep.dev/v1"
	// APIVersionV2 adds the asset graph (File.Loads) and embedded
	// provenance attestations (Verification.Attestations).
	APIVersionV2 = "lockstep.dev/v2"
	// APIVersionV3 adds where a file is served (File.Served): a release
	// split between the CDN and the instance; and the entry files that a
	// bundler's list names outside any page (File.Entry).
	APIVersionV3 = "lockstep.dev/v3"
	Kind         = "ReleaseManifest"
	// MediaType names the format of APIVersion where a media type is
	// wanted (OCI artifacts, HTTP Content-Type); MediaTypeV2 that of
	// APIVersionV2 (see MediaTypeOf).
	MediaType   = "application/vnd.lockstep.release.v1+json"
	MediaTypeV2 = "application/vnd.lockstep.release.v2+json"
	MediaTypeV3 = "application/vnd.lockstep.release.v3+json"
)

// Versions lists the versions Parse accepts, oldest first.
var Versions = []string{APIVersion, APIVersionV2, APIVersionV3}

// MediaTypeOf returns the media type of an apiVersion, "" for one this
// package does not know.
func MediaTypeOf(apiVersion string) string {
	switch apiVersion {
	case APIVersion:
		return MediaType
	case APIVersionV2:
		return MediaTypeV2
	case APIVersionV3:
		return MediaTypeV3
	}
	return ""
}

// versionRank orders the versions: 1 for v1, 2 for v2, 3 for v3, 0 for
// another.
func versionRank(apiVersion string) int {
	switch apiVersion {
	case APIVersion:
		return 1
	case APIVersionV2:
		return 2
	case APIVersionV3:
		return 3
	}
	return 0
}

// Version returns the oldest apiVersion that holds every field m uses:
// APIVersionV3 when a file says where it is served (Served) or is an
// entry (Entry), else
// APIVersionV2 when a file has Loads or the manifest embeds attestations,
// else APIVersion. A writer sets
// m.APIVersion to it; Validate refuses a manifest whose apiVersion is
// older than this.
func (m *Manifest) Version() string {
	v, _ := m.needs()
	return v
}

// needs returns Version and the first field that needs it ("" for v1).
func (m *Manifest) needs() (string, string) {
	for i, f := range m.Assets.Files {
		if f.Served != "" {
			return APIVersionV3, fmt.Sprintf("assets.files[%d].served", i)
		}
		if f.Entry {
			return APIVersionV3, fmt.Sprintf("assets.files[%d].entry", i)
		}
	}
	for i, f := range m.Assets.Files {
		if len(f.Loads) > 0 {
			return APIVersionV2, fmt.Sprintf("assets.files[%d].loads", i)
		}
	}
	if m.Verification != nil && len(m.Verification.Attestations) > 0 {
		return APIVersionV2, "verification.attestations"
	}
	return APIVersion, ""
}

// MaxSize is the largest manifest Parse accepts, in bytes (16 MiB: about
// 100,000 assets).
const MaxSize = 16 << 20

// MaxGeneration is the highest generation a manifest or pointer may carry:
// 2^53 − 1, the largest integer that every JSON reader keeps exactly, and
// far enough below the int64 limit that rising is never an overflow.
const MaxGeneration = 1<<53 - 1

// Manifest is a release manifest: what a release runs and what it serves.
type Manifest struct {
	APIVersion string  `json:"apiVersion"`
	Kind       string  `json:"kind"`
	Release    Release `json:"release"`
	Images     []Image `json:"images"`
	Assets     Assets  `json:"assets"`
	// Verification carries the material a consumer needs to verify the
	// images' signatures without calling the registry (optional).
	Verification *Verification `json:"verification,omitempty"`
}

// Release identifies one release of one service.
type Release struct {
	// Name is the service, e.g. "store-web".
	Name string `json:"name"`
	// Generation is ≥ 1 and at most MaxGeneration, and only ever rises for
	// a Name.
	Generation int64        `json:"generation"`
	CreatedAt  time.Time    `json:"createdAt"`
	ExpiresAt  *time.Time   `json:"expiresAt,omitempty"`
	Source     *BuildSource `json:"source,omitempty"`
}

// BuildSource says where a release was built.
type BuildSource struct {
	Repository     string `json:"repository,omitempty"`
	Commit         string `json:"commit,omitempty"`
	Ref            string `json:"ref,omitempty"`
	WorkflowRunURL string `json:"workflowRunURL,omitempty"`
}

// Bindable reports whether s names a repository and a commit, what a
// provenance attestation is checked against. A nil s names neither.
func (s *BuildSource) Bindable() bool {
	return s != nil && s.Repository != "" && s.Commit != ""
}

// Image is one image of a release, pinned by digest.
type Image struct {
	// Name is the role of the image in the release, e.g. "web".
	Name string `json:"name"`
	// Ref is the reference as it was given, e.g. "registry/app:v1".
	Ref        string `json:"ref"`
	Repository string `json:"repository"`
	Tag        string `json:"tag,omitempty"`
	// Digest is what Ref resolved to: an index or an image manifest.
	Digest    Digest `json:"digest"`
	MediaType string `json:"mediaType"`
	// Platforms lists every platform of an index; for a single image
	// manifest it holds one entry whose Digest equals the image's Digest.
	Platforms []Platform `json:"platforms"`
}

// Platform is one platform-specific image manifest.
type Platform struct {
	OS           string `json:"os"`
	Architecture string `json:"architecture"`
	Variant      string `json:"variant,omitempty"`
	// Digest is the platform's image manifest digest.
	Digest Digest `json:"digest"`
	// Config is the digest of the image's config blob: the image ID that
	// Docker and containerd report.
	Config Digest `json:"config"`
}

// String returns os/arch[/variant].
func (p Platform) String() string {
	s := p.OS + "/" + p.Architecture
	if p.Variant != "" {
		s += "/" + p.Variant
	}
	return s
}

// Assets is the set of static files a release serves: from its CDN, and
// (apiVersion v3) the files whose Served says so from the instance.
type Assets struct {
	// CDN holds one or more base URLs the files are served under.
	CDN []string `json:"cdn"`
	// Origin is the CDN's origin, where known; it must not be the CDN.
	Origin string `json:"origin,omitempty"`
	// Files is sorted by Path, each Path once.
	Files []File `json:"files"`
	// Fingerprint is Fingerprint(Files); it is left out of a manifest
	// without files.
	Fingerprint Digest `json:"fingerprint,omitzero"`
}

// File is one static asset.
type File struct {
	// Path is relative to each CDN base, with forward slashes.
	Path string `json:"path"`
	Size int64  `json:"size"`
	// SHA256 is the lower-case hex SHA-256 of the file's bytes.
	SHA256      string `json:"sha256"`
	ContentType string `json:"contentType,omitempty"`
	// Loads (apiVersion v2) lists the files of the same manifest that this
	// one makes a browser load: its static and dynamic imports, its CSS,
	// the fonts and images its CSS names, its workers. Sorted, each once,
	// never the file itself. It is the asset graph that (*Assets).Closure
	// walks; empty when unknown.
	Loads []string `json:"loads,omitempty"`
	// Served (apiVersion v3) says where a browser fetches the file when
	// it is not the CDN alone: ServedInstance for a file the instance
	// serves itself at its own origin (Next.js's public/ files and RSC
	// payloads when assetPrefix puts only /_next/ on the CDN, a service
	// worker and its ngsw.json), at the same Path under the instance's
	// root; ServedCDNAndInstance for a file fetched from both (Angular's
	// app shell: the page loads it from the CDN, the service worker from
	// its scope on the instance). Empty, the default, is the CDN bases;
	// there is no other value.
	Served string `json:"served,omitempty"`
	// Entry (apiVersion v3) says that a bundler's own list names the file
	// an entry point (Vite's isEntry chunks, webpack's entrypoints): a
	// server renders its tag from that list, so no page of the release
	// may name it, yet a browser loads it and what it loads. It is a root
	// of the release's closure (Roots), as every page is.
	Entry bool `json:"entry,omitempty"`
}

// The values of File.Served.
const (
	// ServedInstance is a file the instance serves, not the CDN.
	ServedInstance = "instance"
	// ServedCDNAndInstance is a file both the CDN and the instance serve.
	ServedCDNAndInstance = "cdn-and-instance"
)

// OnInstance reports whether the instance serves f (alone or as well as
// the CDN).
func (f File) OnInstance() bool {
	return f.Served == ServedInstance || f.Served == ServedCDNAndInstance
}

// OnCDN reports whether the CDN bases serve f (alone or as well as the
// instance).
func (f File) OnCDN() bool { return f.Served != ServedInstance }

// Verification is signature material embedded in a manifest, so that a
// booting instance verifies its images' signatures from the manifest alone,
// without calling the registry (verify/imagesig Embed and VerifyEmbedded).
type Verification struct {
	// Signatures holds the cosign signatures of the images' index and
	// platform manifests, each naming the digest it signs.
	Signatures []EmbeddedSignature `json:"signatures,omitempty"`
	// Attestations (apiVersion v2) holds the verified SLSA provenance
	// attestations of the images' index and platform manifests
	// (verify/provenance Verify and VerifyEmbedded), each naming the
	// digest it was found for.
	Attestations []EmbeddedAttestation `json:"attestations,omitempty"`
}

// The forms of an embedded attestation (EmbeddedAttestation.MediaType).
const (
	// AttestationDSSE is a DSSE envelope, as cosign stores an attestation
	// in a layer of its `sha256-<hex>.att` image, with the layer's
	// certificate, chain, Rekor bundle and timestamp beside it.
	AttestationDSSE = "application/vnd.dsse.envelope.v1+json"
	// AttestationBundle is a Sigstore bundle v0.3 holding a DSSE envelope,
	// as an OCI referrer (GitHub artifact attestations, `cosign attest
	// --new-bundle-format`): it carries its own verification material.
	AttestationBundle = "application/vnd.dev.sigstore.bundle.v0.3+json"
)

// EmbeddedAttestation is one signed in-toto statement about an image, as
// found in the registry: its form (MediaType) decides what Content holds
// and which other fields may be set.
type EmbeddedAttestation struct {
	// Digest is the image manifest or index the attestation was found
	// for (the subject it was attached to in the registry).
	Digest Digest `json:"digest"`
	// MediaType is AttestationDSSE or AttestationBundle.
	MediaType string `json:"mediaType"`
	// Content is the DSSE envelope's JSON (AttestationDSSE) or the
	// Sigstore bundle's JSON (AttestationBundle), exactly as stored.
	Content []byte `json:"content"`
	// Certificate and Chain are PEM, for a keyless DSSE envelope
	// (dev.sigstore.cosign/certificate, dev.sigstore.cosign/chain).
	Certificate string `json:"certificate,omitempty"`
	Chain       string `json:"chain,omitempty"`
	// Bundle is the Rekor bundle (JSON, dev.sigstore.cosign/bundle) of a
	// DSSE envelope that was logged.
	Bundle []byte `json:"bundle,omitempty"`
	// RFC3161Timestamp is the timestamp authority's response (JSON) of a
	// DSSE envelope, where there is one.
	RFC3161Timestamp []byte `json:"rfc3161Timestamp,omitempty"`
}

// EmbeddedSignature is one image signature as cosign stores it in a
// signature image's layer (the `sha256-<hex>.sig` tag): the simple-signing
// payload, the signature over it, and the layer's annotations.
type EmbeddedSignature struct {
	// Digest is the signed image manifest or index.
	Digest Digest `json:"digest"`
	// Payload is the base64 of the simple-signing payload (the layer).
	Payload string `json:"payload"`
	// Signature is the base64 signature over the payload
	// (dev.cosignproject.cosign/signature).
	Signature string `json:"signature"`
	// Certificate and Chain are PEM, for keyless signatures
	// (dev.sigstore.cosign/certificate, dev.sigstore.cosign/chain).
	Certificate string `json:"certificate,omitempty"`
	Chain       string `json:"chain,omitempty"`
	// Bundle is the Rekor bundle (JSON, dev.sigstore.cosign/bundle), where
	// the signature was logged.
	Bundle []byte `json:"bundle,omitempty"`
	// RFC3161Timestamp is the timestamp authority's response (JSON,
	// dev.sigstore.cosign/rfc3161timestamp), where there is one.
	RFC3161Timestamp []byte `json:"rfc3161Timestamp,omitempty"`
}

// Fingerprint is one digest over a set of files: the SHA-256 of the lines
// "<sha256 hex>  <path>\n" sorted by path, the format of sha256sum. An
// instance that serves exactly the files of a manifest reports the same
// fingerprint as the manifest.
func Fingerprint(files []File) Digest {
	less := func(a, b File) int { return strings.Compare(a.Path, b.Path) }
	sorted := files
	if !slices.IsSortedFunc(files, less) {
		sorted = slices.Clone(files)
		slices.SortStableFunc(sorted, less)
	}
	h := sha256.New()
	buf := make([]byte, 0, 4096)
	for _, f := range sorted {
		buf = append(append(append(append(buf, f.SHA256...), "  "...), f.Path...), '\n')
		if len(buf) >= 4096-256 {
			h.Write(buf)
			buf = buf[:0]
		}
	}
	h.Write(buf)
	return Digest{Algorithm: "sha256", Hex: hex.EncodeToString(h.Sum(nil))}
}

// File returns the file at path and whether there is one.
func (a *Assets) File(path string) (File, bool) {
	i := sort.Search(len(a.Files), func(i int) bool { return a.Files[i].Path >= path })
	if i < len(a.Files) && a.Files[i].Path == path {
		return a.Files[i], true
	}
	return File{}, false
}

// Image returns the image with the given role name.
func (m *Manifest) Image(name string) (*Image, bool) {
	for i := range m.Images {
		if m.Images[i].Name == name {
			return &m.Images[i], true
		}
	}
	return nil, false
}

// Matches reports whether d identifies the image on platform
// ("os/arch[/variant]", "" for any): Identify's rule.
func (im *Image) Matches(d Digest, platform string) bool {
	match, _ := im.Identify(d, platform)
	return match != ""
}

// PlatformMatches reports whether p is the platform "os/arch[/variant]".
// A want without a variant matches any variant of os/arch.
func PlatformMatches(p Platform, want string) bool {
	parts := strings.Split(want, "/")
	if len(parts) < 2 || parts[0] != p.OS || parts[1] != p.Architecture {
		return false
	}
	return len(parts) < 3 || parts[2] == p.Variant
}

// Expired reports whether the manifest has an expiry at or before now.
func (m *Manifest) Expired(now time.Time) bool {
	return m.Release.ExpiresAt != nil && !now.Before(*m.Release.ExpiresAt)
}

// ID is "name@generation", for messages.
func (m *Manifest) ID() string {
	return m.Release.Name + "@" + strconv.FormatInt(m.Release.Generation, 10)
}
