package app

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/lockstep-dev/lockstep/manifest"
)

// Issue 11, classes 6 (the store's files), 7 (store URLs), 8 (numbers and
// text) and 9 (signatures): each case lays out a directory store as an
// attacker (or an accident) would, runs the real CLI, and asserts the
// refusal's exit code and what it says, that it came at once (a FIFO never
// hangs it), that no S3 endpoint was contacted, and that the store's tree
// is byte for byte what it was: nothing written, nothing deleted.

// attackEnv is one case's world: a directory store at dir/store holding
// release web, generations 1 to 3 published on production, the manifest
// files beside it (dir/gN.json), and a counting S3 endpoint that no case
// may reach, which env (the environment of the case's runs) names.
type attackEnv struct {
	dir, store, url string
	ms              []*manifest.Signed
	s3Requests      *atomic.Int64
	env             []string
}

func (e *attackEnv) m(g int) string { return filepath.Join(e.dir, fmt.Sprintf("g%d.json", g)) }

// rel is a path in the store.
func (e *attackEnv) rel(p string) string { return filepath.Join(e.store, "web", p) }

func (e *attackEnv) manifestFile(g int) string {
	return e.rel("manifests/" + e.ms[g-1].Digest.String() + ".json")
}

func (e *attackEnv) write(t *testing.T, path, data string) string {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// fifo puts a FIFO where path was.
func (e *attackEnv) fifo(t *testing.T, path string) {
	t.Helper()
	os.Remove(path)
	if err := syscall.Mkfifo(path, 0o644); err != nil {
		t.Fatal(err)
	}
}

func (e *attackEnv) symlink(t *testing.T, target, path string) {
	t.Helper()
	os.Remove(path)
	if err := os.Symlink(target, path); err != nil {
		t.Fatal(err)
	}
}

// linkAway moves the file at path out of the store and leaves a link to
// it in its place: the same bytes, through a link.
func (e *attackEnv) linkAway(t *testing.T, path string) {
	t.Helper()
	away := filepath.Join(e.dir, "away-"+filepath.Base(path))
	if err := os.Rename(path, away); err != nil {
		t.Fatal(err)
	}
	e.symlink(t, away, path)
}

func (e *attackEnv) sparse(t *testing.T, path string, size int64) {
	t.Helper()
	if err := os.Truncate(path, size); err != nil {
		t.Fatal(err)
	}
}

// variant writes manifest g's bytes with old replaced by new, as a file
// beside the others, and returns its path.
func (e *attackEnv) variant(t *testing.T, g int, old, new string) string {
	t.Helper()
	raw := string(e.ms[g-1].Raw)
	if !strings.Contains(raw, old) {
		t.Fatalf("manifest %d has no %q", g, old)
	}
	return e.write(t, filepath.Join(e.dir, "variant", "m.json"), strings.Replace(raw, old, new, 1))
}

// pointer writes the production pointer with generation gen (as written,
// so that it can be out of range) and movedBy by, naming manifest g.
func (e *attackEnv) pointer(t *testing.T, g int, gen, by string) {
	t.Helper()
	e.write(t, e.rel("channels/production.json"), fmt.Sprintf(`{"release":"web","channel":"production","digest":%q,"generation":%s,"movedAt":"2026-01-01T00:00:00Z","movedBy":"%s"}`,
		e.ms[g-1].Digest.String(), gen, by))
}

func newAttackEnv(t *testing.T) *attackEnv {
	t.Helper()
	dir := t.TempDir()
	var n atomic.Int64
	s3 := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		http.Error(w, "no case may reach S3", http.StatusForbidden)
	}))
	t.Cleanup(s3.Close)
	e := &attackEnv{dir: dir, store: filepath.Join(dir, "store"), ms: storeTestManifests(t, dir, 3), s3Requests: &n,
		env: s3RunEnv(s3.URL, "AK", "SK")}
	// A plain path: t.TempDir's name holds the case's, and a '%' or '#'
	// in it is refused in a file:// URL.
	e.url = e.store
	for g := 1; g <= 3; g++ {
		if code, out, errs := runIn(t, e.env, "publish", "--allow-unsigned", "--store", e.url, e.m(g)); code != 0 {
			t.Fatalf("publish g%d: exit %d\n%s\n%s", g, code, out, errs)
		}
	}
	return e
}

type storeAttack struct {
	name string
	// args lays out the store and returns the command to run.
	args func(t *testing.T, e *attackEnv) []string
	code int
	// want is a piece of what the refusal says (stdout or stderr), in
	// lower case.
	want string
	// fresh, when set, names directories that the command must not
	// create.
	fresh func(e *attackEnv) []string
}

// stateDir is the trusted state's directory of admitOf, which a refusal
// does not create.
func stateDir(e *attackEnv) []string { return []string{filepath.Join(e.dir, "state")} }

func statusOf(e *attackEnv) []string { return []string{"status", "--store", e.url, "--release", "web"} }

func gcOf(e *attackEnv) []string {
	return []string{"gc", "--store", e.url, "--release", "web", "--keep", "0", "--yes"}
}

// admitOf is `admit` from the store, stopping before any probe: every
// case refuses while reading or verifying the manifest.
func admitOf(e *attackEnv, url string, extra ...string) []string {
	return append([]string{"admit", "--store", url, "--release", "web", "--state-dir", filepath.Join(e.dir, "state"),
		"--image", "web", "--running", "digest:sha256:" + strings.Repeat("3", 64), "--platform", "linux/amd64",
		"--probe", "http://127.0.0.1:9/", "--timeout", "5s"}, extra...)
}

func publishTo(url string) func(t *testing.T, e *attackEnv) []string {
	return func(t *testing.T, e *attackEnv) []string {
		return []string{"publish", "--allow-unsigned", "--store", url, e.m(1)}
	}
}

// publishVariant publishes manifest 3 with old replaced by new.
func publishVariant(old, new string) func(t *testing.T, e *attackEnv) []string {
	return func(t *testing.T, e *attackEnv) []string {
		return []string{"publish", "--allow-unsigned", "--store", e.url, e.variant(t, 3, old, new)}
	}
}

func storeAttacks() []storeAttack {
	var cases []storeAttack
	add := func(c ...storeAttack) { cases = append(cases, c...) }

	// Class 6: the store's files. Only regular files are read, at once,
	// bounded; links are refused by every command alike.
	add(
		storeAttack{"class 6/status: the channel is a FIFO", func(t *testing.T, e *attackEnv) []string {
			e.fifo(t, e.rel("channels/production.json"))
			return statusOf(e)
		}, ExitUnverified, "not a regular file", nil},
		storeAttack{"class 6/admit: the channel is a FIFO", func(t *testing.T, e *attackEnv) []string {
			e.fifo(t, e.rel("channels/production.json"))
			return admitOf(e, e.url, "--insecure-allow-unsigned")
		}, ExitUnverified, "not a regular file", stateDir},
		storeAttack{"class 6/status: the manifest is a FIFO", func(t *testing.T, e *attackEnv) []string {
			e.fifo(t, e.manifestFile(3))
			return statusOf(e)
		}, ExitUnverified, "not a regular file", nil},
		storeAttack{"class 6/status: the signature is a FIFO", func(t *testing.T, e *attackEnv) []string {
			e.fifo(t, strings.TrimSuffix(e.manifestFile(3), ".json")+".sig")
			return statusOf(e)
		}, ExitUnverified, "not a regular file", nil},
		storeAttack{"class 6/admit: the bundle is a FIFO", func(t *testing.T, e *attackEnv) []string {
			e.fifo(t, strings.TrimSuffix(e.manifestFile(3), ".json")+".sigstore.json")
			return admitOf(e, e.url, "--insecure-allow-unsigned")
		}, ExitUnverified, "not a regular file", nil},
		storeAttack{"class 6/status: the bundle is a directory", func(t *testing.T, e *attackEnv) []string {
			os.MkdirAll(strings.TrimSuffix(e.manifestFile(3), ".json")+".sigstore.json", 0o755)
			return statusOf(e)
		}, ExitUnverified, "not a regular file", nil},
		storeAttack{"class 6/status: the channel is a directory", func(t *testing.T, e *attackEnv) []string {
			os.MkdirAll(e.rel("channels/staging.json"), 0o755)
			return []string{"status", "--store", e.url, "--release", "web", "--channel", "staging"}
		}, ExitUnverified, "not a regular file", nil},
		storeAttack{"class 6/status: the channel links to /dev/zero", func(t *testing.T, e *attackEnv) []string {
			e.symlink(t, "/dev/zero", e.rel("channels/production.json"))
			return statusOf(e)
		}, ExitUnverified, "symbolic link", nil},
		storeAttack{"class 6/status: the channel links to a valid pointer", func(t *testing.T, e *attackEnv) []string {
			e.linkAway(t, e.rel("channels/production.json"))
			return statusOf(e)
		}, ExitUnverified, "symbolic link", nil},
		storeAttack{"class 6/admit: the channel links to a valid pointer", func(t *testing.T, e *attackEnv) []string {
			e.linkAway(t, e.rel("channels/production.json"))
			return admitOf(e, e.url, "--insecure-allow-unsigned")
		}, ExitUnverified, "symbolic link", nil},
		storeAttack{"class 6/gc: a channel that is a link names generation 1", func(t *testing.T, e *attackEnv) []string {
			// staging -> a pointer to generation 1: a reader that followed
			// it would use a manifest that gc, skipping it, deletes.
			p := e.write(t, filepath.Join(e.dir, "staging.json"), fmt.Sprintf(`{"release":"web","channel":"staging","digest":%q,"generation":1,"movedAt":"2026-01-01T00:00:00Z"}`, e.ms[0].Digest.String()))
			e.symlink(t, p, e.rel("channels/staging.json"))
			return gcOf(e)
		}, ExitUnverified, "not a regular file", nil},
		storeAttack{"class 6/gc: the live channel is a link", func(t *testing.T, e *attackEnv) []string {
			e.linkAway(t, e.rel("channels/production.json"))
			return gcOf(e)
		}, ExitUnverified, "not a regular file", nil},
		storeAttack{"class 6/gc: a channel is a FIFO", func(t *testing.T, e *attackEnv) []string {
			e.fifo(t, e.rel("channels/staging.json"))
			return gcOf(e)
		}, ExitUnverified, "not a regular file", nil},
		storeAttack{"class 6/gc: a manifest is a link", func(t *testing.T, e *attackEnv) []string {
			e.linkAway(t, e.manifestFile(1))
			return gcOf(e)
		}, ExitUnverified, "not a regular file", nil},
		storeAttack{"class 6/rollback: the manifest to go back to is a link", func(t *testing.T, e *attackEnv) []string {
			e.linkAway(t, e.manifestFile(1))
			return []string{"rollback", "--allow-unsigned", "--store", e.url, "--release", "web", "--to", e.ms[0].Digest.String()}
		}, ExitUnverified, "symbolic link", nil},
		storeAttack{"class 6/status: a manifest over 16 MiB", func(t *testing.T, e *attackEnv) []string {
			e.sparse(t, e.manifestFile(3), manifest.MaxSize+1)
			return statusOf(e)
		}, ExitUnverified, "limit", nil},
		storeAttack{"class 6/status: a pointer over 1 MiB", func(t *testing.T, e *attackEnv) []string {
			e.sparse(t, e.rel("channels/production.json"), manifest.MaxPointerSize+1)
			return statusOf(e)
		}, ExitUnverified, "limit", nil},
		storeAttack{"class 6/status: a signature over 1 MiB", func(t *testing.T, e *attackEnv) []string {
			p := e.write(t, strings.TrimSuffix(e.manifestFile(3), ".json")+".sig", "x")
			e.sparse(t, p, manifest.MaxSidecarSize+1)
			return statusOf(e)
		}, ExitUnverified, "limit", nil},
		storeAttack{"class 6/publish: a new channel below what gc may have taken (generation 1, production at 3)", func(t *testing.T, e *attackEnv) []string {
			return []string{"publish", "--allow-unsigned", "--store", e.url, "--channel", "canary", e.m(1)}
		}, ExitMismatch, "gc may already have deleted", nil},
		storeAttack{"class 6/publish: a new channel one generation below the floor", func(t *testing.T, e *attackEnv) []string {
			return []string{"publish", "--allow-unsigned", "--store", e.url, "--channel", "canary", e.m(2)}
		}, ExitMismatch, "below generation 3 that channel production names", func(e *attackEnv) []string {
			return []string{e.rel("channels/canary.json")}
		}},
		storeAttack{"class 6/publish: the manifest is a FIFO", func(t *testing.T, e *attackEnv) []string {
			e.fifo(t, e.m(1))
			return []string{"publish", "--allow-unsigned", "--store", e.url, e.m(1)}
		}, ExitInvalid, "not a regular file", nil},
		storeAttack{"class 6/publish: the manifest is a directory", func(t *testing.T, e *attackEnv) []string {
			return []string{"publish", "--allow-unsigned", "--store", e.url, e.dir}
		}, ExitInvalid, "not a regular file", nil},
		storeAttack{"class 6/publish: the signature beside it is a FIFO", func(t *testing.T, e *attackEnv) []string {
			e.fifo(t, e.m(1)+".sig")
			return []string{"publish", "--allow-unsigned", "--store", e.url, e.m(1)}
		}, ExitInvalid, "not a regular file", nil},
		storeAttack{"class 6/gc: --in-use is a FIFO", func(t *testing.T, e *attackEnv) []string {
			e.fifo(t, filepath.Join(e.dir, "report.json"))
			return append(gcOf(e), "--in-use", filepath.Join(e.dir, "report.json"))
		}, ExitInvalid, "not a regular file", nil},
		storeAttack{"class 6/gc: --in-use is /dev/zero", func(t *testing.T, e *attackEnv) []string {
			return append(gcOf(e), "--in-use", "/dev/zero")
		}, ExitInvalid, "not a regular file", nil},
		storeAttack{"class 6/manifest verify: the key is a FIFO", func(t *testing.T, e *attackEnv) []string {
			e.fifo(t, filepath.Join(e.dir, "cosign.pub"))
			return []string{"manifest", "verify", "--key", filepath.Join(e.dir, "cosign.pub"), e.m(1)}
		}, ExitInvalid, "not a regular file", nil},
		storeAttack{"class 6/status: a store that is not there is not created", func(t *testing.T, e *attackEnv) []string {
			return []string{"status", "--store", filepath.Join(e.dir, "nowhere", "store"), "--release", "web"}
		}, ExitUnverified, "holds no release", func(e *attackEnv) []string { return []string{filepath.Join(e.dir, "nowhere")} }},
		storeAttack{"class 6/admit: a store that is not there is not created", func(t *testing.T, e *attackEnv) []string {
			return admitOf(e, filepath.Join(e.dir, "nowhere", "store"), "--insecure-allow-unsigned")
		}, ExitUnverified, "holds no release", func(e *attackEnv) []string {
			return []string{filepath.Join(e.dir, "nowhere"), filepath.Join(e.dir, "state")}
		}},
		storeAttack{"class 6/status: a release that is not there is not created", func(t *testing.T, e *attackEnv) []string {
			return []string{"status", "--store", e.url, "--release", "api"}
		}, ExitUnverified, "release api is not in store", func(e *attackEnv) []string { return []string{filepath.Join(e.store, "api")} }},
	)

	// Class 7: store URLs. Exit 2 before anything is written or contacted.
	for _, url := range []string{
		"file://store", "file:/tmp/store", "file:store", "FILE:///tmp/store", "s3:/releases/x", "s3:releases", "S3://releases/x",
		"s3://releases/../x", "s3://releases/a/%2e%2e/x", "s3://releases/x?versionId=1", "s3://releases/x#frag",
		"s3://Releases/x", "s3://ab/x", "s3://10.0.0.1/x", "s3://releases//x", "s3://releases/./x", "gs://releases/x",
		"http://127.0.0.1:9/store", "file:///tmp/a/../store", "file:///tmp/%2e%2e/store", "s3://releases/x\u202e",
	} {
		add(storeAttack{"class 7/publish --store " + strconv.Quote(url), publishTo(url), ExitInvalid, "store url", nil})
	}
	for _, cmd := range []string{"status", "gc", "rollback"} {
		add(storeAttack{"class 7/" + cmd + " --store s3://releases/../x", func(t *testing.T, e *attackEnv) []string {
			args := []string{cmd, "--store", "s3://releases/../x", "--release", "web"}
			switch cmd {
			case "gc":
				args = append(args, "--keep", "0", "--yes")
			case "rollback":
				args = append(args, "--to", "1")
			}
			return args
		}, ExitInvalid, "store url", nil})
	}
	add(storeAttack{"class 7/admit --store s3:/releases/x", func(t *testing.T, e *attackEnv) []string {
		return admitOf(e, "s3:/releases/x", "--insecure-allow-unsigned")
	}, ExitInvalid, "store url", nil})

	// Class 8: numbers and text.
	max := strconv.FormatInt(manifest.MaxGeneration, 10)
	add(
		storeAttack{"class 8/publish: generation 2^53", publishVariant(`"generation": 3`, `"generation": 9007199254740992`), ExitInvalid, "at most", nil},
		storeAttack{"class 8/publish: generation at the int64 limit", publishVariant(`"generation": 3`, `"generation": 9223372036854775807`), ExitInvalid, "at most", nil},
		storeAttack{"class 8/publish: generation past int64", publishVariant(`"generation": 3`, `"generation": 9223372036854775808`), ExitInvalid, "generation", nil},
		storeAttack{"class 8/status: a pointer past 2^53-1", func(t *testing.T, e *attackEnv) []string {
			e.pointer(t, 3, "9007199254740992", "ci")
			return statusOf(e)
		}, ExitUnverified, "over the maximum", nil},
		storeAttack{"class 8/rollback: the channel is at 2^53-1", func(t *testing.T, e *attackEnv) []string {
			p := e.variant(t, 3, `"generation": 3`, `"generation": `+max)
			if code, out, errs := runIn(t, e.env, "publish", "--allow-unsigned", "--store", e.url, p); code != 0 {
				t.Fatalf("publish generation %s: exit %d\n%s\n%s", max, code, out, errs)
			}
			return []string{"rollback", "--allow-unsigned", "--store", e.url, "--release", "web", "--to", "1"}
		}, ExitInvalid, "no generation can follow", nil},
		storeAttack{"class 8/status: a pointer with invalid UTF-8", func(t *testing.T, e *attackEnv) []string {
			e.pointer(t, 3, "3", "c\xffi")
			return statusOf(e)
		}, ExitUnverified, "utf-8", nil},
		storeAttack{"class 8/status: a pointer with a lone surrogate", func(t *testing.T, e *attackEnv) []string {
			e.pointer(t, 3, "3", `c\ud800i`)
			return statusOf(e)
		}, ExitUnverified, "lone surrogate", nil},
		storeAttack{"class 8/status: a stored manifest with a lone surrogate", func(t *testing.T, e *attackEnv) []string {
			p := e.manifestFile(3)
			b, _ := os.ReadFile(p)
			os.WriteFile(p, []byte(strings.Replace(string(b), `"registry.test/web"`, `"registry.test/web\udfff"`, 1)), 0o644)
			return statusOf(e)
		}, ExitUnverified, "lone surrogate", nil},
		storeAttack{"class 8/publish: an asset path with invalid UTF-8", publishVariant(`.js"`, ".j\xc0s\""), ExitInvalid, "utf-8", nil},
		storeAttack{"class 8/publish: an asset path with a lone surrogate", publishVariant(`.js"`, `.j\ud800s"`), ExitInvalid, "lone surrogate", nil},
		storeAttack{"class 8/publish: an asset path with a low surrogate first", publishVariant(`.js"`, `.j\udc00\ud800s"`), ExitInvalid, "lone surrogate", nil},
		storeAttack{"class 8/publish: an asset path with '%'", publishVariant(`.js"`, `%2ejs"`), ExitInvalid, "'%'", nil},
		storeAttack{"class 8/publish: an asset path with a bidi override", publishVariant(`.js"`, `\u202esj.js"`), ExitInvalid, "format character", nil},
		storeAttack{"class 8/publish: an asset path with a zero-width joiner", publishVariant(`.js"`, `\u200d.js"`), ExitInvalid, "format character", nil},
		storeAttack{"class 8/publish: an asset path with a no-break space", publishVariant(`.js"`, `\u00a0.js"`), ExitInvalid, "space character", nil},
		storeAttack{"class 8/publish: an asset path with a trailing space", publishVariant(`.js"`, `.js "`), ExitInvalid, "trailing space", nil},
		storeAttack{"class 8/publish: a CDN base with port 99999", publishVariant(`"https://cdn.test/web/"`, `"https://cdn.test:99999/web/"`), ExitInvalid, "port", nil},
		storeAttack{"class 8/publish: a CDN base with an empty port", publishVariant(`"https://cdn.test/web/"`, `"https://cdn.test:/web/"`), ExitInvalid, "port", nil},
		storeAttack{"class 8/publish: a CDN base with a dot-dot segment", publishVariant(`"https://cdn.test/web/"`, `"https://cdn.test/x/../web/"`), ExitInvalid, "segment", nil},
		storeAttack{"class 8/publish: a CDN base with an encoded dot-dot segment", publishVariant(`"https://cdn.test/web/"`, `"https://cdn.test/x/%2E%2E/web/"`), ExitInvalid, "segment", nil},
		storeAttack{"class 8/publish: a CDN base given twice", publishVariant(`"https://cdn.test/web/"`, `"https://cdn.test/web/", "HTTPS://cdn.test:443/web"`), ExitInvalid, "again", nil},
	)

	// Class 9: signatures. Empty or white space is an invalid signature,
	// never "unsigned".
	blankSidecar := func(suffix, data string) func(t *testing.T, e *attackEnv) []string {
		return func(t *testing.T, e *attackEnv) []string {
			e.write(t, e.m(1)+suffix, data)
			return []string{"publish", "--allow-unsigned", "--store", e.url, e.m(1)}
		}
	}
	add(
		storeAttack{"class 9/publish: an empty signature beside the manifest", blankSidecar(".sig", ""), ExitInvalid, "invalid signature", nil},
		storeAttack{"class 9/publish: a white-space signature", blankSidecar(".sig", " \n\t"), ExitInvalid, "invalid signature", nil},
		storeAttack{"class 9/publish: an empty bundle", blankSidecar(".sigstore.json", ""), ExitInvalid, "invalid signature", nil},
		storeAttack{"class 9/publish: a white-space bundle", blankSidecar(".sigstore.json", "\r\n"), ExitInvalid, "invalid signature", nil},
	)
	verifyBlank := func(suffix, data string) func(t *testing.T, e *attackEnv) []string {
		return func(t *testing.T, e *attackEnv) []string {
			_, pub := keyPair(t, e.dir, "cosign")
			e.write(t, e.m(2)+suffix, data)
			return []string{"manifest", "verify", "--key", pub, e.m(2)}
		}
	}
	add(
		storeAttack{"class 9/manifest verify: an empty signature", verifyBlank(".sig", ""), ExitMismatch, "invalid signature", nil},
		storeAttack{"class 9/manifest verify: a white-space signature", verifyBlank(".sig", "\n"), ExitMismatch, "invalid signature", nil},
		storeAttack{"class 9/manifest verify: an empty bundle", verifyBlank(".sigstore.json", ""), ExitMismatch, "invalid signature", nil},
		storeAttack{"class 9/admit: an empty signature in the store, unsigned allowed", func(t *testing.T, e *attackEnv) []string {
			_, pub := keyPair(t, e.dir, "cosign")
			e.write(t, strings.TrimSuffix(e.manifestFile(3), ".json")+".sig", "")
			return admitOf(e, e.url, "--key", pub, "--insecure-allow-unsigned")
		}, ExitMismatch, "invalid signature", nil},
		storeAttack{"class 9/admit: a white-space bundle in the store, unsigned allowed", func(t *testing.T, e *attackEnv) []string {
			_, pub := keyPair(t, e.dir, "cosign")
			e.write(t, strings.TrimSuffix(e.manifestFile(3), ".json")+".sigstore.json", "  ")
			return admitOf(e, e.url, "--key", pub, "--insecure-allow-unsigned")
		}, ExitMismatch, "invalid signature", nil},
	)
	return cases
}

func TestAttackStore(t *testing.T) {
	t.Parallel()
	cases := storeAttacks()
	if len(cases) < 50 {
		t.Fatalf("%d cases, want at least 50", len(cases))
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newAttackEnv(t)
			args := tc.args(t, e)
			before := tree(t, e.store)
			start := time.Now()
			code, out, errs := runIn(t, e.env, args...)
			took := time.Since(start)
			if code != tc.code {
				t.Errorf("%q: exit %d, want %d\n%s\n%s", args, code, tc.code, out, errs)
			}
			if got := strings.ToLower(out + errs); !strings.Contains(got, tc.want) {
				t.Errorf("%q: the refusal does not say %q:\n%s\n%s", args, tc.want, out, errs)
			}
			if took > 5*time.Second {
				t.Errorf("%q took %v: a refusal comes at once", args, took)
			}
			if n := e.s3Requests.Load(); n != 0 {
				t.Errorf("%q sent %d requests to S3", args, n)
			}
			after := tree(t, e.store)
			for p, v := range before {
				if after[p] != v {
					t.Errorf("%q changed %s: %q, was %q", args, p, after[p], v)
				}
			}
			for p, v := range after {
				if _, ok := before[p]; !ok {
					t.Errorf("%q created %s (%s)", args, p, v)
				}
			}
			if tc.fresh != nil {
				for _, p := range tc.fresh(e) {
					if _, err := os.Lstat(p); !os.IsNotExist(err) {
						t.Errorf("%q created %s, and it only reads", args, p)
					}
				}
			}
		})
	}
	// A relative file:// URL is refused before a directory named after
	// its host part is made where the command runs: looked at once every
	// (parallel) case has run.
	t.Cleanup(func() {
		if _, err := os.Lstat("store"); !os.IsNotExist(err) {
			t.Errorf("a case created ./store")
		}
	})
}
