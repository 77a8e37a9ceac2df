package manifest

import (
	"fmt"
	"net"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// Validate checks a decoded manifest's fields. It returns the first
// *ValidationError found, naming the field.
func Validate(m *Manifest) error {
	if err := checkVersion(m.APIVersion, m.Kind); err != nil {
		return err
	}
	r := m.Release
	if err := ValidateName(r.Name); err != nil {
		return invalid("release.name", "%v", err)
	}
	if r.Generation < 1 {
		return invalid("release.generation", "must be at least 1, got %d", r.Generation)
	}
	if r.Generation > MaxGeneration {
		return invalid("release.generation", "must be at most %d (2^53 − 1), got %d", int64(MaxGeneration), r.Generation)
	}
	if r.CreatedAt.IsZero() {
		return invalid("release.createdAt", "is required")
	}
	if r.ExpiresAt != nil && !r.ExpiresAt.After(r.CreatedAt) {
		return invalid("release.expiresAt", "is not after createdAt")
	}
	if len(m.Images) == 0 && len(m.Assets.Files) == 0 {
		return invalid("", "a manifest needs at least one image or asset")
	}
	names := map[string]bool{}
	for i, im := range m.Images {
		f := fmt.Sprintf("images[%d]", i)
		if err := ValidateName(im.Name); err != nil {
			return invalid(f+".name", "%v", err)
		}
		if names[im.Name] {
			return invalid(f+".name", "%q appears twice", im.Name)
		}
		names[im.Name] = true
		if im.Ref == "" {
			return invalid(f+".ref", "is required")
		}
		if im.Repository == "" {
			return invalid(f+".repository", "is required")
		}
		if im.Digest.IsZero() {
			return invalid(f+".digest", "is required")
		}
		if im.MediaType == "" {
			return invalid(f+".mediaType", "is required")
		}
		if len(im.Platforms) == 0 {
			return invalid(f+".platforms", "needs at least one platform")
		}
		for j, p := range im.Platforms {
			pf := fmt.Sprintf("%s.platforms[%d]", f, j)
			if p.OS == "" || p.Architecture == "" {
				return invalid(pf, "os and architecture are required")
			}
			if p.Digest.IsZero() {
				return invalid(pf+".digest", "is required")
			}
			if p.Config.IsZero() {
				return invalid(pf+".config", "is required")
			}
		}
	}
	a := m.Assets
	if len(a.Files) > 0 && len(a.CDN) == 0 {
		return invalid("assets.cdn", "needs at least one base URL when there are files")
	}
	bases := make(map[string]int, len(a.CDN))
	for i, base := range a.CDN {
		if err := ValidateBaseURL(base); err != nil {
			return invalid(fmt.Sprintf("assets.cdn[%d]", i), "%v", err)
		}
		k := baseKey(base)
		if j, dup := bases[k]; dup {
			return invalid(fmt.Sprintf("assets.cdn[%d]", i), "%q is assets.cdn[%d] again", base, j)
		}
		bases[k] = i
	}
	if a.Origin != "" {
		if err := ValidateBaseURL(a.Origin); err != nil {
			return invalid("assets.origin", "%v", err)
		}
	}
	for i, file := range a.Files {
		// The field name is formatted only for an error: a manifest of
		// 100,000 files is validated without 100,000 Sprintfs.
		f := func(field string) string { return fmt.Sprintf("assets.files[%d].%s", i, field) }
		if err := ValidatePath(file.Path); err != nil {
			return invalid(f("path"), "%v", err)
		}
		if i > 0 {
			prev := a.Files[i-1].Path
			if prev == file.Path {
				return invalid(f("path"), "%q appears twice", file.Path)
			}
			if prev > file.Path {
				return invalid(f("path"), "files are not sorted by path (%q after %q)", file.Path, prev)
			}
		}
		if file.Size < 0 {
			return invalid(f("size"), "is negative")
		}
		if len(file.SHA256) != 64 {
			return invalid(f("sha256"), "want 64 hex digits, got %d", len(file.SHA256))
		}
		if err := lowerHex(file.SHA256); err != nil {
			return invalid(f("sha256"), "%v", err)
		}
		switch file.Served {
		case "", ServedInstance, ServedCDNAndInstance:
		case "cdn":
			return invalid(f("served"), "\"cdn\" is the default: leave served out (a file without it is served by the CDN)")
		default:
			return invalid(f("served"), "%q is not where a file is served (want %q, %q, or no served for the CDN)", file.Served, ServedInstance, ServedCDNAndInstance)
		}
		if err := validateLoads(a.Files, i); err != nil {
			return err
		}
	}
	if need, field := m.needs(); versionRank(m.APIVersion) < versionRank(need) {
		return invalid(field, "needs apiVersion %q (the manifest says %q)", need, m.APIVersion)
	}
	if len(a.Files) > 0 || !a.Fingerprint.IsZero() {
		if want := Fingerprint(a.Files); a.Fingerprint != want {
			return invalid("assets.fingerprint", "is %s, but the files give %s", a.Fingerprint, want)
		}
	}
	if v := m.Verification; v != nil {
		for i, s := range v.Signatures {
			if s.Digest.IsZero() {
				return invalid(fmt.Sprintf("verification.signatures[%d].digest", i), "is required")
			}
		}
		for i, a := range v.Attestations {
			if err := validateAttestation(a); err != nil {
				err.Field = fmt.Sprintf("verification.attestations[%d].%s", i, err.Field)
				return err
			}
		}
	}
	return nil
}

// validateAttestation checks an embedded attestation's form: a digest, a
// known media type, content, and for a Sigstore bundle (which carries its
// own material) no DSSE-only field. Its Field is relative to the entry.
func validateAttestation(a EmbeddedAttestation) *ValidationError {
	switch {
	case a.Digest.IsZero():
		return invalid("digest", "is required")
	case a.MediaType != AttestationDSSE && a.MediaType != AttestationBundle:
		return invalid("mediaType", "%q is not a known attestation form (want %q or %q)", a.MediaType, AttestationDSSE, AttestationBundle)
	case len(a.Content) == 0:
		return invalid("content", "is required")
	case a.MediaType == AttestationBundle && (a.Certificate != "" || a.Chain != "" || len(a.Bundle) > 0 || len(a.RFC3161Timestamp) > 0):
		return invalid("mediaType", "a Sigstore bundle carries its own verification material: certificate, chain, bundle and rfc3161Timestamp are for %q only", AttestationDSSE)
	}
	return nil
}

// validateLoads checks files[i].Loads: each entry a path of another file
// of files (which is sorted), sorted, each once.
func validateLoads(files []File, i int) error {
	for j, l := range files[i].Loads {
		f := func() string { return fmt.Sprintf("assets.files[%d].loads[%d]", i, j) }
		switch {
		case l == files[i].Path:
			return invalid(f(), "%q is the file itself", l)
		case j > 0 && files[i].Loads[j-1] >= l:
			return invalid(f(), "loads are not sorted, each once (%q after %q)", l, files[i].Loads[j-1])
		}
		if _, ok := slices.BinarySearchFunc(files, l, func(f File, p string) int { return strings.Compare(f.Path, p) }); !ok {
			return invalid(f(), "%q is not a file of the manifest", l)
		}
	}
	return nil
}

// ValidateName checks a release or image name: 1 to 128 characters of
// [a-z0-9._-], starting with a letter or digit.
func ValidateName(s string) error {
	if s == "" {
		return fmt.Errorf("is required")
	}
	if len(s) > 128 {
		return fmt.Errorf("%q is longer than 128 characters", s)
	}
	for i, c := range s {
		ok := c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || (i > 0 && (c == '.' || c == '_' || c == '-'))
		if !ok {
			return fmt.Errorf("%q: want lower-case letters, digits, '.', '_' or '-', starting with a letter or digit", s)
		}
	}
	return nil
}

// ValidatePath checks that p is a safe relative asset path: not empty, not
// absolute, no "." or ".." or empty segments, no segment with leading or
// trailing space, no backslashes, no '%', no control or invisible format
// characters (bidi controls, zero-width characters) and no space but
// U+0020 (no no-break spaces), valid UTF-8 in Unicode normal form C.
func ValidatePath(p string) error {
	// An ASCII string is valid UTF-8 and in normal form C, and holds no
	// format character and no space but ' ': nearly every path is ASCII,
	// and the Unicode checks are most of the cost of the others (a
	// manifest of 10,000 assets checks 10,000 paths at every parse).
	ascii := isASCII(p)
	switch {
	case p == "":
		return fmt.Errorf("is empty")
	case !ascii && !utf8.ValidString(p):
		return fmt.Errorf("%q is not valid UTF-8", p)
	case strings.HasPrefix(p, "/"):
		return fmt.Errorf("%q is absolute", p)
	case strings.Contains(p, `\`):
		return fmt.Errorf("%q contains a backslash", p)
	case !ascii && !norm.NFC.IsNormalString(p):
		return fmt.Errorf("%q is not in Unicode normal form C", p)
	}
	for _, c := range p {
		switch {
		case unicode.IsControl(c):
			return fmt.Errorf("%q contains a control character", p)
		case c == '%':
			// A path is escaped on the way to a URL; one that holds an
			// escape already would be read as another path by whoever
			// decodes it twice.
			return fmt.Errorf("%q contains '%%'", p)
		case c < utf8.RuneSelf:
			// ASCII: neither a format character nor another space.
		case unicode.Is(unicode.Cf, c):
			// Bidi controls, zero-width characters, the BOM: the path
			// would not read as what it is.
			return fmt.Errorf("%q contains the invisible format character %U", p, c)
		case unicode.In(c, unicode.Zs, unicode.Zl, unicode.Zp):
			return fmt.Errorf("%q contains the space character %U (only ' ' is allowed)", p, c)
		}
	}
	return validateSegments(p)
}

// validateSegments checks the segments of p, a path that passed the
// checks of its characters: none empty, "." or "..", none with leading or
// trailing space (Unicode's, which no ASCII shortcut skips).
func validateSegments(p string) error {
	for rest := p; ; {
		seg, more, found := strings.Cut(rest, "/")
		switch seg {
		case "":
			return fmt.Errorf("%q has an empty segment", p)
		case ".", "..":
			return fmt.Errorf("%q has a %q segment", p, seg)
		}
		if strings.TrimSpace(seg) != seg {
			return fmt.Errorf("%q has a segment with leading or trailing space", p)
		}
		if !found {
			return nil
		}
		rest = more
	}
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// ValidateBaseURL checks a CDN or origin base URL: absolute http or https,
// a host, a port (if any) from 1 to 65535, no query, no fragment, no user
// information, no ".", ".." (plain or percent-encoded) or empty path
// segments.
func ValidateBaseURL(s string) error {
	u, err := url.Parse(s)
	if err != nil {
		return fmt.Errorf("%q: %v", s, err)
	}
	if u.Scheme != "https" && u.Scheme != "http" {
		return fmt.Errorf("%q: want an http or https URL", s)
	}
	if u.Host == "" {
		return fmt.Errorf("%q: no host", s)
	}
	if u.User != nil {
		return fmt.Errorf("%q: user information is not allowed", s)
	}
	if u.RawQuery != "" || u.Fragment != "" || u.ForceQuery || strings.Contains(s, "#") {
		return fmt.Errorf("%q: a base URL has no query or fragment", s)
	}
	if port := u.Port(); port != "" || strings.HasSuffix(u.Host, ":") {
		n, err := strconv.Atoi(port)
		if err != nil || n < 1 || n > 65535 || port[0] == '0' {
			return fmt.Errorf("%q: port %q is not a port from 1 to 65535", s, port)
		}
	}
	if u.Hostname() == "" {
		return fmt.Errorf("%q: no host", s)
	}
	// The path as written and as decoded: "%2e%2e" is a dot segment too.
	for _, p := range []string{u.EscapedPath(), u.Path} {
		for _, seg := range strings.Split(p, "/") {
			if seg == "." || seg == ".." {
				return fmt.Errorf("%q: a base URL has no %q segment", s, seg)
			}
		}
	}
	if strings.Contains(u.Path, "//") {
		return fmt.Errorf("%q: a base URL has no empty path segment", s)
	}
	return nil
}

// baseKey is the form of a base URL that two spellings of one base share:
// the scheme and host in lower case, the default port dropped, no
// trailing slash.
func baseKey(s string) string {
	u, err := url.Parse(s)
	if err != nil {
		return s
	}
	host := strings.ToLower(u.Hostname())
	if p := u.Port(); p != "" && !(u.Scheme == "https" && p == "443") && !(u.Scheme == "http" && p == "80") {
		host = net.JoinHostPort(host, p)
	}
	return strings.ToLower(u.Scheme) + "://" + host + strings.TrimSuffix(u.EscapedPath(), "/")
}
