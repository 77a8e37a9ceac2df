package cdn

import (
	"encoding/base64"
	"encoding/hex"
	"net/http"
	"strings"
)

// claim is a SHA-256 a response header states for the representation.
type claim struct {
	header string
	hex    string
}

// headerDigests returns every SHA-256 the headers state: x-amz-checksum-
// sha256 (base64; a composite "…-N" multipart checksum is not a digest of
// the object and is skipped), a strong ETag that is a SHA-256 in hex,
// "sha256:"-prefixed hex or base64 (unless etag is false), Digest (RFC
// 3230: sha-256=base64) and Repr-Digest (RFC 9530: sha-256=:base64:).
func headerDigests(h http.Header, etag bool) []claim {
	var out []claim
	if v := strings.TrimSpace(h.Get("X-Amz-Checksum-Sha256")); v != "" && !strings.Contains(v, "-") &&
		!strings.EqualFold(h.Get("X-Amz-Checksum-Type"), "COMPOSITE") {
		if x, ok := b64SHA256(v); ok {
			out = append(out, claim{"x-amz-checksum-sha256", x})
		}
	}
	if v := strings.TrimSpace(h.Get("ETag")); etag && v != "" && !strings.HasPrefix(v, "W/") {
		v = strings.TrimPrefix(strings.Trim(v, `"`), "sha256:")
		if x, ok := hexSHA256(v); ok {
			out = append(out, claim{"etag", x})
		} else if x, ok := b64SHA256(v); ok {
			out = append(out, claim{"etag", x})
		}
	}
	for _, v := range h.Values("Digest") {
		for _, item := range strings.Split(v, ",") {
			alg, val, _ := strings.Cut(strings.TrimSpace(item), "=")
			if strings.EqualFold(alg, "sha-256") {
				if x, ok := b64SHA256(val); ok {
					out = append(out, claim{"digest", x})
				}
			}
		}
	}
	for _, v := range h.Values("Repr-Digest") {
		for _, item := range strings.Split(v, ",") {
			key, val, _ := strings.Cut(strings.TrimSpace(item), "=")
			if i := strings.IndexByte(val, ';'); i >= 0 {
				val = val[:i]
			}
			val = strings.TrimSpace(val)
			if strings.EqualFold(key, "sha-256") && len(val) > 2 && val[0] == ':' && val[len(val)-1] == ':' {
				if x, ok := b64SHA256(val[1 : len(val)-1]); ok {
					out = append(out, claim{"repr-digest", x})
				}
			}
		}
	}
	return out
}

// hexSHA256 accepts 64 hex digits, either case, and returns them in lower
// case.
func hexSHA256(s string) (string, bool) {
	if len(s) != 64 {
		return "", false
	}
	b, err := hex.DecodeString(s)
	if err != nil {
		return "", false
	}
	return hex.EncodeToString(b), true
}

// b64SHA256 accepts 32 bytes in standard or URL base64, padded or not.
func b64SHA256(s string) (string, bool) {
	if len(s) != 43 && len(s) != 44 {
		return "", false // not 32 bytes, padded or not: no decoding (most ETags)
	}
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		if b, err := enc.DecodeString(s); err == nil && len(b) == 32 {
			return hex.EncodeToString(b), true
		}
	}
	return "", false
}
