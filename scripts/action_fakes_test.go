package scripts

// The Action's install, attacked (issue 35, item 5): what it installs is
// only what it verified. Each case runs scripts/action-install.sh (or
// action.sh, as a job runs it) against a fake release server and a fake
// releases API (https, with the test's own certificate, as GitHub's are),
// and asserts the exit code, what the step says, which requests were made
// (and with which credentials), and what the tool cache holds afterwards.

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/pem"
	"fmt"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
)

// fakeBinary is a "lockstep" that says which release it is and, when run,
// leaves a mark (so a test sees whether a binary ever ran) and the
// environment it was given.
func fakeBinary(tag string) []byte {
	return []byte("#!/bin/sh\n# release " + tag + "\n" +
		`[ -n "${FAKE_MARK:-}" ] && { echo "` + tag + `" >>"$FAKE_MARK"; env >"$FAKE_MARK.env"; }` + "\n" +
		`echo "lockstep: this is the fake release ` + tag + `" >&2` + "\nexit 2\n")
}

// tarGz is a release archive holding one file, lockstep. Its gzip stream
// is stored, not compressed (gzip.NoCompression): still a .tar.gz that
// tar -xzf and the install script read like any other, but deflating the
// real lockstep binary (84 MB) under the race detector took 30 to 120 s
// of CPU. The buffer is sized once: growing it by doubling to that size
// cost 10 to 20 s more under the race detector (its shadow memory).
func tarGz(t *testing.T, bin []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	buf.Grow(len(bin) + 1<<16) // the headers, a few bytes each 64 KB
	zw, err := gzip.NewWriterLevel(&buf, gzip.NoCompression)
	if err != nil {
		t.Fatal(err)
	}
	tw := tar.NewWriter(zw)
	if err := tw.WriteHeader(&tar.Header{Name: "lockstep", Mode: 0o755, Size: int64(len(bin)), Typeflag: tar.TypeReg}); err != nil {
		t.Fatal(err)
	}
	tw.Write(bin)
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	zw.Close()
	return buf.Bytes()
}

func sha256Hex(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

// fakeRelease is the files of release tag for linux on this machine's
// architecture: the archive, checksums.txt and a signature bundle.
func fakeRelease(t *testing.T, tag string) map[string][]byte {
	t.Helper()
	archive := fmt.Sprintf("lockstep_%s_linux_%s.tar.gz", strings.TrimPrefix(tag, "v"), runtime.GOARCH)
	a := tarGz(t, fakeBinary(tag))
	return map[string][]byte{
		archive:                       a,
		"checksums.txt":               []byte(sha256Hex(a) + "  " + archive + "\n"),
		"checksums.txt.sigstore.json": []byte(`{"fake": "bundle of ` + tag + `"}`),
	}
}

func archiveName(tag string) string {
	return fmt.Sprintf("lockstep_%s_linux_%s.tar.gz", strings.TrimPrefix(tag, "v"), runtime.GOARCH)
}

// requests records what a test server was asked: "PATH", or "PATH
// AUTHORIZATION" when the request carried credentials. The script that
// asks is another process, so the race detector cannot see that its
// requests end before the test reads them: a lock makes it so.
type requests struct {
	mu  sync.Mutex
	got []string
}

func (r *requests) add(req *http.Request) {
	r.mu.Lock()
	defer r.mu.Unlock()
	s := req.URL.Path
	if a := req.Header.Get("Authorization"); a != "" {
		s += " " + a
	}
	r.got = append(r.got, s)
}

func (r *requests) list() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.got)
}

func (r *requests) reset() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.got = nil
}

// releasesServer serves releases' files as GitHub serves them
// (/TAG/NAME), over https.
func releasesServer(t *testing.T, releases map[string]map[string][]byte) (*httptest.Server, *requests) {
	t.Helper()
	got := &requests{}
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got.add(r)
		tag, name, ok := strings.Cut(strings.TrimPrefix(r.URL.Path, "/"), "/")
		if b, found := releases[tag][name]; ok && found {
			w.Write(b)
			return
		}
		http.NotFound(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv, got
}

// apiServer is a fake GitHub releases API answering list for
// /repos/lockstep-dev/lockstep/releases.
func apiServer(t *testing.T, list string) (*httptest.Server, *requests) {
	t.Helper()
	got := &requests{}
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got.add(r)
		if r.URL.Path != "/repos/lockstep-dev/lockstep/releases" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, list)
	}))
	t.Cleanup(srv.Close)
	return srv, got
}

// caBundle writes the certificates of the given test servers where curl
// reads its roots from (CURL_CA_BUNDLE).
func caBundle(t *testing.T, srvs ...*httptest.Server) string {
	t.Helper()
	var b bytes.Buffer
	for _, s := range srvs {
		pem.Encode(&b, &pem.Block{Type: "CERTIFICATE", Bytes: s.Certificate().Raw})
	}
	p := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(p, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// cacheFiles lists everything under a tool cache (relative paths): after a
// refused install it must be nothing at all.
func cacheFiles(t *testing.T, root string) []string {
	t.Helper()
	var out []string
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err == nil && p != root {
			rel, _ := filepath.Rel(root, p)
			out = append(out, rel)
		}
		return nil
	})
	return out
}

var runnerArch = map[string]string{"amd64": "X64", "arm64": "ARM64"}[runtime.GOARCH]

// installEnv is a runner's environment for action-install.sh: no version
// input (the ref decides), no signature check unless a case sets one.
func installEnv(t *testing.T, cache, ca string, extra ...string) []string {
	return append([]string{
		"RUNNER_OS=Linux", "RUNNER_ARCH=" + runnerArch, "RUNNER_TEMP=" + t.TempDir(), "RUNNER_TOOL_CACHE=" + cache,
		"CURL_CA_BUNDLE=" + ca, "INPUT_VERIFY_SIGNATURE=false",
	}, extra...)
}
