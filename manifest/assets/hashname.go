package assets

import (
	"path"
	"strings"
)

// NameHash returns the content hash that a bundler put in the name of the
// file at p, or "" when its name carries none: then the name does not
// change when the bytes do (robots.txt, favicon.svg, index.html), and a
// check must compare the bytes.
//
// The rule, tested on real Vite and webpack builds (testdata/web): a part
// of the base name between dots, other than the first and the extension,
// that is 8 or more lower-case hex digits (webpack's [name].[contenthash],
// which may be all digits: report.50729254.chunk.js) or a hash-like run;
// or a part that ends with "-" and a hash-like run (Rollup and Vite's
// [name]-[hash], whose base64url hash may itself hold "-" or "_"). A
// hash-like run is 8 or more characters of [A-Za-z0-9_-] that look
// random: letters and digits mixed, or both cases of letters. So
// webpack's main.8fce7357.js and Vite's index-B4TPZJfM.js,
// Report--TfcrJ_6.js, polyfills-legacy-CLIumKav.js are hashed;
// app-settings.js, CHANGELOG.txt and report-20261202.pdf are not. Outside
// the dotted hex form the rule errs on the side of "no hash": that costs a
// byte comparison, never a missed change; a name that puts 8 digits
// between dots (report.20261202.pdf) counts as hashed.
func NameHash(p string) string {
	parts := strings.Split(path.Base(p), ".")
	if len(parts) < 2 {
		return ""
	}
	for _, part := range parts[1 : len(parts)-1] {
		if hexRun(part) || hashLike(part) {
			return part
		}
	}
	for _, part := range parts[:len(parts)-1] {
		// [name]-[hash]: the hash is the last 8 characters (Vite's
		// length), or everything after the last "-".
		if n := len(part); n > 9 && part[n-9] == '-' && hashLike(part[n-8:]) {
			return part[n-8:]
		}
		if i := strings.LastIndexByte(part, '-'); i > 0 && hashLike(part[i+1:]) {
			return part[i+1:]
		}
	}
	return ""
}

// hashLike says whether s is 8 or more characters of the base64url
// alphabet (which holds hex and base32) that mix letters and digits, or
// both cases of letters.
func hashLike(s string) bool {
	if len(s) < 8 {
		return false
	}
	var digit, lower, upper bool
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c >= '0' && c <= '9':
			digit = true
		case c >= 'a' && c <= 'z':
			lower = true
		case c >= 'A' && c <= 'Z':
			upper = true
		case c == '-' || c == '_':
		default:
			return false
		}
	}
	return (digit && (lower || upper)) || (lower && upper)
}

// hexRun says whether s is 8 or more lower-case hex digits.
func hexRun(s string) bool {
	if len(s) < 8 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}
