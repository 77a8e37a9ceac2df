package scripts

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"os"
	"os/exec"
	"sync"
	"testing"

	"github.com/lockstep-dev/lockstep/internal/testkit/testenv"
)

func fileSHA256(t *testing.T, path string) string {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	h := sha256.Sum256(raw)
	return hex.EncodeToString(h[:])
}

// gunzipSHA256 is the SHA-256 of a gzipped file's content.
func gunzipSHA256(t *testing.T, path string) string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	h := sha256.New()
	if _, err := io.Copy(h, zr); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// extract returns the named file of a .tar.gz archive (archiveFiles).
func extract(t *testing.T, archive, name string) []byte {
	t.Helper()
	got, ok := archiveFiles(t, archive)[name]
	if !ok {
		t.Fatalf("%s holds no %s", archive, name)
	}
	return got
}

// archives keeps what archiveFiles read, by the archive's path.
var archives sync.Map // string → *archiveRead

type archiveRead struct {
	once  sync.Once
	files map[string][]byte
}

// archiveFiles returns the regular files of a .tar.gz archive by name,
// read once for all the package's tests: the snapshot's archive (an 84 MB
// binary) is read by several, and each read under -race cost about a
// CPU-second. The archive must not change while the tests run (dist/ is
// written before them).
func archiveFiles(t *testing.T, archive string) map[string][]byte {
	t.Helper()
	v, _ := archives.LoadOrStore(archive, &archiveRead{})
	r := v.(*archiveRead)
	r.once.Do(func() {
		files := map[string][]byte{}
		walkTarGz(t, archive, func(h *tar.Header, body []byte) bool {
			if body != nil {
				files[h.Name] = body
			}
			return true
		})
		r.files = files // only when the whole archive read
	})
	if r.files == nil {
		t.Fatalf("%s could not be read (see the first test that read it)", archive)
	}
	return r.files
}

// walkTarGz calls fn with every entry of a .tar.gz archive (the body of a
// regular file, nil for any other), until fn returns false.
func walkTarGz(t *testing.T, archive string, fn func(h *tar.Header, body []byte) bool) {
	t.Helper()
	f, err := os.Open(archive)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	gunzip(t, archive, f, func(r io.Reader) { walkTar(t, archive, r, fn) })
}

// gunzip calls read with the gzip stream r decompressed by the system's
// gzip -d (as a user's tar -xzf does it), and fails the test if gzip
// finds the stream bad. Go's compress/flate runs under the race detector
// in these tests: a release archive took it 20 s of CPU to read at load
// 10, gzip -d 4 s.
func gunzip(t *testing.T, what string, r io.Reader, read func(io.Reader)) {
	t.Helper()
	cmd := exec.Command(testenv.Require(t, "gzip"), "-dc")
	cmd.Stdin = r
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("gzip -d %s: %v", what, err)
	}
	defer func() {
		if cmd.ProcessState == nil { // read failed the test
			cmd.Process.Kill()
			cmd.Wait()
		}
	}()
	read(out)
	// What read left unread, to the end: gzip then checks the whole
	// stream (its trailer's CRC and length) and exits.
	if _, err := io.Copy(io.Discard, out); err != nil {
		t.Fatalf("gzip -d %s: %v", what, err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("gzip -d %s: %v\n%s", what, err, stderr.String())
	}
}

// walkTar is walkTarGz over an uncompressed tar stream. Each body is read
// into a buffer of its size: growing one by doubling to a binary's size
// took seconds under the race detector.
func walkTar(t *testing.T, archive string, r io.Reader, fn func(h *tar.Header, body []byte) bool) {
	t.Helper()
	tr := tar.NewReader(r)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return
		}
		if err != nil {
			t.Fatalf("%s: %v", archive, err)
		}
		var body []byte
		if h.Typeflag == tar.TypeReg {
			if h.Size < 0 || h.Size > 1<<30 {
				t.Fatalf("%s: %s is %d bytes", archive, h.Name, h.Size)
			}
			body = make([]byte, h.Size)
			if _, err := io.ReadFull(tr, body); err != nil {
				t.Fatalf("%s: %s: %v", archive, h.Name, err)
			}
		}
		if !fn(h, body) {
			return
		}
	}
}
