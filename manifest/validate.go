package manifest

import (
	"fmt"
	"net/url"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// Validate checks a decoded manifest's fields. It returns the first
// *ValidationError found, naming the field.
func Validate(m *Manifest) error {
	if m.APIVersion != APIVersion {
		return invalid("apiVersion", "%q is not a known version (want %q)", m.APIVersion, APIVersion)
	}
	if m.Kind != Kind {
		return invalid("kind", "%q is not %q", m.Kind, Kind)
	}
	r := m.Release
	if err := ValidateName(r.Name); err != nil {
		return invalid("release.name", "%v", err)
	}
	if r.Generation < 1 {
		return invalid("release.generation", "must be at least 1, got %d", r.Generation)
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
	for i, base := range a.CDN {
		if err := ValidateBaseURL(base); err != nil {
			return invalid(fmt.Sprintf("assets.cdn[%d]", i), "%v", err)
		}
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
// absolute, no "." or ".." or empty segments, no backslashes, no control
// characters, valid UTF-8 in Unicode normal form C.
func ValidatePath(p string) error {
	switch {
	case p == "":
		return fmt.Errorf("is empty")
	case !utf8.ValidString(p):
		return fmt.Errorf("%q is not valid UTF-8", p)
	case strings.HasPrefix(p, "/"):
		return fmt.Errorf("%q is absolute", p)
	case strings.Contains(p, `\`):
		return fmt.Errorf("%q contains a backslash", p)
	case !norm.NFC.IsNormalString(p):
		return fmt.Errorf("%q is not in Unicode normal form C", p)
	}
	for _, c := range p {
		if unicode.IsControl(c) {
			return fmt.Errorf("%q contains a control character", p)
		}
	}
	for rest := p; ; {
		seg, more, found := strings.Cut(rest, "/")
		switch seg {
		case "":
			return fmt.Errorf("%q has an empty segment", p)
		case ".", "..":
			return fmt.Errorf("%q has a %q segment", p, seg)
		}
		if !found {
			return nil
		}
		rest = more
	}
}

// ValidateBaseURL checks a CDN or origin base URL: absolute http or https,
// a host, no query, no fragment, no user information.
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
	if u.RawQuery != "" || u.Fragment != "" {
		return fmt.Errorf("%q: a base URL has no query or fragment", s)
	}
	return nil
}
