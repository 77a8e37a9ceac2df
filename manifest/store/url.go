package store

import (
	"fmt"
	"path/filepath"
	"strings"
	"unicode"
	"unicode/utf8"
)

// URL is a parsed store URL: a directory (file:///DIR or a path) or an S3
// bucket and prefix (s3://BUCKET/PREFIX).
type URL struct {
	// Scheme is "file" or "s3".
	Scheme string
	// Dir is a directory store's directory, cleaned.
	Dir string
	// Bucket and Prefix are an S3 store's; Prefix has no leading or
	// trailing slash ("" for the bucket's root).
	Bucket, Prefix string
}

// String returns the URL in a form ParseURL takes back to the same URL:
// s3://BUCKET/PREFIX, or a directory's path (with "./" before a relative
// one that would read as a scheme).
func (u URL) String() string {
	if u.Scheme == "s3" {
		return "s3://" + u.Bucket + "/" + u.Prefix
	}
	if _, _, ok := schemeOf(u.Dir); ok {
		return "./" + u.Dir
	}
	return u.Dir
}

// ParseURL is the one parser of a store URL, run before anything is
// written or contacted. It takes:
//   - file:///DIR: an absolute directory (file://relative is refused: the
//     host part of a file URL is not a path);
//   - a plain path, absolute or relative, with no scheme;
//   - s3://BUCKET/PREFIX: a bucket named by S3's rules (3 to 63 of
//     [a-z0-9.-], starting and ending with a letter or digit, no "..", not
//     an IPv4 address) and a prefix of "/"-separated segments, none empty,
//     "." or "..".
//
// Everything else is an error: another scheme, or a scheme-like typo
// ("s3:/x", "file:/x", "S3://x"); in a URL, a query, a fragment, a '%'
// (a file or S3 URL is taken as written, never decoded, so "%2e%2e" would
// mean one thing here and another to whoever decodes it), a backslash,
// control characters or invalid UTF-8.
func ParseURL(raw string) (URL, error) {
	bad := func(format string, a ...any) (URL, error) {
		return URL{}, fmt.Errorf("store URL %q: "+format, append([]any{raw}, a...)...)
	}
	if raw == "" {
		return bad("is empty")
	}
	if !utf8.ValidString(raw) {
		return bad("is not valid UTF-8")
	}
	for _, c := range raw {
		if unicode.IsControl(c) || unicode.Is(unicode.Cf, c) {
			return bad("contains a control or format character %U", c)
		}
	}
	scheme, rest, hasScheme := schemeOf(raw)
	if !hasScheme {
		return URL{Scheme: "file", Dir: filepath.Clean(raw)}, nil
	}
	if strings.ContainsAny(rest, "?#%\\") {
		return bad("a store URL has no query, fragment, percent-encoding or backslash")
	}
	switch {
	case scheme == "file" && strings.HasPrefix(rest, "//"):
		dir := strings.TrimPrefix(rest, "//")
		if !strings.HasPrefix(dir, "/") {
			return bad("want file:///ABSOLUTE/DIR (three slashes); for a relative directory give the path alone")
		}
		if err := checkSegments(dir[1:], true); err != nil {
			return bad("%v", err)
		}
		return URL{Scheme: "file", Dir: filepath.Clean(dir)}, nil
	case scheme == "s3" && strings.HasPrefix(rest, "//"):
		bucket, prefix, _ := strings.Cut(strings.TrimPrefix(rest, "//"), "/")
		if err := checkBucket(bucket); err != nil {
			return bad("%v", err)
		}
		prefix = strings.TrimSuffix(prefix, "/")
		if err := checkSegments(prefix, false); err != nil {
			return bad("%v", err)
		}
		return URL{Scheme: "s3", Bucket: bucket, Prefix: prefix}, nil
	}
	return bad("want file:///DIR, a directory, or s3://BUCKET/PREFIX")
}

// schemeOf splits a URL scheme (RFC 3986: a letter, then letters, digits,
// '+', '-', '.', then ':') from raw. Anything that looks like one counts,
// so that "s3:/x" and "S3://x" are typos, not directories.
func schemeOf(raw string) (scheme, rest string, ok bool) {
	i := strings.IndexByte(raw, ':')
	if i < 1 {
		return "", raw, false
	}
	for j, c := range raw[:i] {
		letter := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
		if !letter && (j == 0 || !(c >= '0' && c <= '9' || c == '+' || c == '-' || c == '.')) {
			return "", raw, false
		}
	}
	return raw[:i], raw[i+1:], true
}

// checkSegments refuses empty, "." and ".." segments in a "/"-separated
// path ("" is no segment at all). With trailingSlash, one trailing "/" is
// allowed.
func checkSegments(p string, trailingSlash bool) error {
	if p == "" {
		return nil
	}
	if trailingSlash {
		p = strings.TrimSuffix(p, "/")
		if p == "" {
			return nil
		}
	}
	for _, seg := range strings.Split(p, "/") {
		switch seg {
		case "":
			return fmt.Errorf("the path has an empty segment")
		case ".", "..":
			return fmt.Errorf("the path has a %q segment", seg)
		}
	}
	return nil
}

// checkBucket applies S3's bucket naming rules.
func checkBucket(b string) error {
	if len(b) < 3 || len(b) > 63 {
		return fmt.Errorf("bucket %q: want 3 to 63 characters", b)
	}
	dots, digitsOnly := 0, true
	for i := 0; i < len(b); i++ {
		c := b[i]
		ok := c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '.' || c == '-'
		if !ok {
			return fmt.Errorf("bucket %q: want lower-case letters, digits, '.' and '-'", b)
		}
		if c == '.' {
			dots++
		} else if c < '0' || c > '9' {
			digitsOnly = false
		}
	}
	first, last := b[0], b[len(b)-1]
	alnum := func(c byte) bool { return c >= 'a' && c <= 'z' || c >= '0' && c <= '9' }
	switch {
	case !alnum(first) || !alnum(last):
		return fmt.Errorf("bucket %q: want a letter or digit first and last", b)
	case strings.Contains(b, ".."), strings.Contains(b, ".-"), strings.Contains(b, "-."):
		return fmt.Errorf("bucket %q: no \"..\", \".-\" or \"-.\"", b)
	case dots == 3 && digitsOnly:
		return fmt.Errorf("bucket %q: a bucket is not an IP address", b)
	}
	return nil
}

// Overlaps reports whether u and v name the same place or one lies inside
// the other: the same S3 bucket with one prefix a prefix of the other's
// segments, or directories one of which (made absolute) contains the
// other.
func (u URL) Overlaps(v URL) bool {
	if u.Scheme != v.Scheme {
		return false
	}
	if u.Scheme == "s3" {
		return u.Bucket == v.Bucket && within(u.Prefix, v.Prefix, "/")
	}
	a, errA := filepath.Abs(u.Dir)
	b, errB := filepath.Abs(v.Dir)
	if errA != nil || errB != nil {
		return true // cannot tell: say they may
	}
	return within(a, b, string(filepath.Separator))
}

// within reports whether a is b, or one is inside the other by whole
// segments.
func within(a, b, sep string) bool {
	if a == "" || b == "" || a == b {
		return true
	}
	ta, tb := strings.TrimSuffix(a, sep)+sep, strings.TrimSuffix(b, sep)+sep
	return strings.HasPrefix(ta, tb) || strings.HasPrefix(tb, ta)
}
