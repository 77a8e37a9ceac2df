package transport

import (
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
)

// readsRootFiles: on Linux, Go's system roots are files (root_unix.go).
const readsRootFiles = true

// certFiles and certDirectories are crypto/x509's for Linux
// (root_linux.go), in its order; Go does not export them.
var certFiles = []string{
	"/etc/ssl/certs/ca-certificates.crt",                // Debian/Ubuntu/Gentoo etc.
	"/etc/pki/tls/certs/ca-bundle.crt",                  // Fedora/RHEL 6
	"/etc/ssl/ca-bundle.pem",                            // OpenSUSE
	"/etc/pki/tls/cacert.pem",                           // OpenELEC
	"/etc/pki/ca-trust/extracted/pem/tls-ca-bundle.pem", // CentOS/RHEL 7
	"/etc/ssl/cert.pem",                                 // Alpine Linux
}

var certDirectories = []string{
	"/etc/ssl/certs",     // SLES10/SLES11
	"/etc/pki/tls/certs", // Fedora/RHEL
}

func init() {
	// As crypto/x509 does: android builds this file too.
	if runtime.GOOS == "android" {
		certDirectories = append(certDirectories,
			"/system/etc/security/cacerts",    // Android system roots
			"/data/misc/keychain/certs-added", // User trusted CA folder
		)
	}
}

// rootFiles is what crypto/x509's loadSystemRoots reads, in its order:
// the first bundle file that can be read, then each directory's files but
// its symlinks to a name in the same directory.
func rootFiles() [][]byte {
	var out [][]byte
	files := certFiles
	if f := os.Getenv("SSL_CERT_FILE"); f != "" {
		files = []string{f}
	}
	for _, f := range files {
		if data, err := os.ReadFile(f); err == nil {
			out = append(out, data)
			break
		}
	}
	dirs := certDirectories
	if d := os.Getenv("SSL_CERT_DIR"); d != "" {
		dirs = strings.Split(d, ":")
	}
	for _, dir := range dirs {
		entries, err := os.ReadDir(dir)
		if err != nil {
			continue
		}
		for _, e := range entries {
			if sameDirSymlink(dir, e) {
				continue
			}
			if data, err := os.ReadFile(dir + "/" + e.Name()); err == nil {
				out = append(out, data)
			}
		}
	}
	return out
}

// sameDirSymlink is crypto/x509's isSameDirSymlink: a symlink whose
// target has no slash (OpenSSL's hash links).
func sameDirSymlink(dir string, e fs.DirEntry) bool {
	if e.Type()&fs.ModeSymlink == 0 {
		return false
	}
	target, err := os.Readlink(filepath.Join(dir, e.Name()))
	return err == nil && !strings.Contains(target, "/")
}
