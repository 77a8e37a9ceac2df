package scripts

// The Action's install, attacked (issue 35, item 5): what it installs is
// only what it verified. Each case runs scripts/action-install.sh (or
// action.sh, as a job runs it) against a fake release server and a fake
// releases API (https, with the test's own certificate, as GitHub's are),
// and asserts the exit code, what the step says, which requests were made
// (and with which credentials), and what the tool cache holds afterwards.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
)

func TestAttackActionInstall(t *testing.T) {
	t.Parallel()
	if runnerArch == "" {
		t.Skipf("no runner architecture for %s", runtime.GOARCH)
	}
	tags := []string{"v1.9.0", "v1.8.0", "v1.7.0-rc.1", "v1.6.0", "v1.5.0", "v2.0.0", "v1.10.0-beta"}
	releases := map[string]map[string][]byte{}
	for _, tag := range tags {
		releases[tag] = fakeRelease(t, tag)
	}
	dl, downloads := releasesServer(t, releases)
	// Newest-created first, as the API lists them: a draft and a
	// pre-release that GitHub flags (whatever their tag says) are newer
	// than the newest published v1.
	api, apiReqs := apiServer(t, `[
		{"tag_name": "v1.9.0", "draft": true, "prerelease": false},
		{"tag_name": "v1.8.0", "draft": false, "prerelease": true},
		{"tag_name": "v1.7.0-rc.1", "draft": false, "prerelease": true},
		{"tag_name": "v1.10.0-beta", "draft": false, "prerelease": false},
		{"tag_name": "v1.6.0/../../v1.9.0", "draft": false, "prerelease": false},
		{"tag_name": "v1.6.0", "draft": false, "prerelease": false},
		{"tag_name": "v1.50.0"},
		{"tag_name": "v2.0.0", "draft": false, "prerelease": false},
		{"tag_name": "v1.5.0", "draft": false, "prerelease": false}]`)
	ca := caBundle(t, dl, api)
	install := func(t *testing.T, cache string, env ...string) scriptRun {
		t.Helper()
		return runScript(t, "bash", "action-install.sh",
			installEnv(t, cache, ca, append([]string{"INPUT_DOWNLOAD_URL=" + dl.URL, "LOCKSTEP_API_URL=" + api.URL}, env...)...))
	}
	// installed returns the release the installed binary says it is.
	installed := func(t *testing.T, path string) string {
		t.Helper()
		b, err := os.ReadFile(strings.TrimSpace(path))
		if err != nil {
			t.Fatalf("the printed path %q: %v", path, err)
		}
		for _, tag := range tags {
			if bytes.Equal(b, fakeBinary(tag)) {
				return tag
			}
		}
		return "(not a release's binary)"
	}
	t.Cleanup(func() {
		for _, r := range downloads.list() {
			if strings.Contains(r, " ") {
				t.Errorf("a download carried credentials: %s", r)
			}
		}
	})

	t.Run("a major version is the newest published release, never a draft or a pre-release", func(t *testing.T) {
		for _, tt := range []struct{ env, want string }{
			{"ACTION_REF=v1", "v1.6.0"}, {"INPUT_VERSION=v1", "v1.6.0"}, {"INPUT_VERSION=latest", "v2.0.0"}, {"ACTION_REF=v2", "v2.0.0"},
		} {
			downloads.reset()
			cache := t.TempDir()
			r := install(t, cache, tt.env)
			if r.code != 0 || installed(t, r.stdout) != tt.want {
				t.Errorf("%s: exit %d, installed %q; want %s\nstderr: %s", tt.env, r.code, r.stdout, tt.want, r.stderr)
				continue
			}
			want := []string{"/" + tt.want + "/checksums.txt", "/" + tt.want + "/" + archiveName(tt.want)}
			if got := downloads.list(); !slices.Equal(got, want) {
				t.Errorf("%s: downloads %v, want %v", tt.env, got, want)
			}
		}
		// Only drafts and pre-releases: nothing to install, nothing asked for.
		only, _ := apiServer(t, `[{"tag_name": "v3.1.0", "draft": true, "prerelease": false}, {"tag_name": "v3.0.0", "draft": false, "prerelease": true}]`)
		downloads.reset()
		cache := t.TempDir()
		r := runScript(t, "bash", "action-install.sh", installEnv(t, cache, caBundle(t, dl, only),
			"ACTION_REF=v3", "INPUT_DOWNLOAD_URL="+dl.URL, "LOCKSTEP_API_URL="+only.URL))
		if r.code != 3 || !strings.Contains(r.stderr, "no published v3.x.y release") || len(downloads.list()) != 0 || len(cacheFiles(t, cache)) != 0 {
			t.Errorf("@v3 with a draft and a pre-release only: exit %d, downloads %v, cache %v, stderr %s; want 3, nothing",
				r.code, downloads.list(), cacheFiles(t, cache), r.stderr)
		}
		// An answer that is not a list of releases is not a release.
		junk, _ := apiServer(t, `{"message": "v1.99.0"}`)
		r = runScript(t, "bash", "action-install.sh", installEnv(t, cache, caBundle(t, dl, junk),
			"ACTION_REF=v1", "INPUT_DOWNLOAD_URL="+dl.URL, "LOCKSTEP_API_URL="+junk.URL))
		if r.code != 3 || len(cacheFiles(t, cache)) != 0 {
			t.Errorf("@v1 with an API answer that is no list: exit %d, cache %v; want 3, nothing", r.code, cacheFiles(t, cache))
		}
	})

	t.Run("a major version is found past the first page of releases, and an endless list is refused", func(t *testing.T) {
		// pages serves the releases API by ?page=N (100 a page, as GitHub
		// does): full pages of pre-releases newer than the newest published
		// v1, which is on page fill+1; with fill past 20 every page is full.
		pages := func(fill int) (*httptest.Server, *requests) {
			got := &requests{}
			srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				got.add(r)
				page, err := strconv.Atoi(r.URL.Query().Get("page"))
				if r.URL.Path != "/repos/lockstep-dev/lockstep/releases" || r.URL.Query().Get("per_page") != "100" || err != nil || page < 1 {
					http.Error(w, "want /repos/lockstep-dev/lockstep/releases?per_page=100&page=N", http.StatusBadRequest)
					return
				}
				var list []map[string]any
				if page <= fill {
					for i := range 100 {
						list = append(list, map[string]any{"tag_name": fmt.Sprintf("v1.%d.0-rc.%d", 100+page, i), "draft": false, "prerelease": true})
					}
				} else if page == fill+1 {
					list = append(list, map[string]any{"tag_name": "v1.6.0", "draft": false, "prerelease": false},
						map[string]any{"tag_name": "v1.5.0", "draft": false, "prerelease": false})
				}
				w.Header().Set("Content-Type", "application/json")
				json.NewEncoder(w).Encode(list)
			}))
			t.Cleanup(srv.Close)
			return srv, got
		}
		api2, reqs := pages(3)
		downloads.reset()
		cache := t.TempDir()
		r := runScript(t, "bash", "action-install.sh", installEnv(t, cache, caBundle(t, dl, api2),
			"ACTION_REF=v1", "INPUT_DOWNLOAD_URL="+dl.URL, "LOCKSTEP_API_URL="+api2.URL))
		if r.code != 0 || installed(t, r.stdout) != "v1.6.0" || len(reqs.list()) != 4 {
			t.Errorf("@v1 with 300 pre-releases first: exit %d, installed %q, %d API requests; want 0, v1.6.0, 4\nstderr: %s",
				r.code, r.stdout, len(reqs.list()), r.stderr)
		}
		endless, reqs := pages(1000)
		downloads.reset()
		cache = t.TempDir()
		r = runScript(t, "bash", "action-install.sh", installEnv(t, cache, caBundle(t, dl, endless),
			"ACTION_REF=v1", "INPUT_DOWNLOAD_URL="+dl.URL, "LOCKSTEP_API_URL="+endless.URL))
		if r.code != 3 || !strings.Contains(r.stderr, "run past 2000") || len(reqs.list()) != 20 || len(downloads.list()) != 0 || len(cacheFiles(t, cache)) != 0 {
			t.Errorf("@v1 with a list that never ends: exit %d, %d API requests, downloads %v, cache %v; want 3 after 20 pages, nothing\nstderr: %s",
				r.code, len(reqs.list()), downloads.list(), cacheFiles(t, cache), r.stderr)
		}
	})

	t.Run("the version is a version before it reaches a path or a URL", func(t *testing.T) {
		for _, v := range []string{
			"../v1.6.0", "v1.6.0/../../v1.9.0", "v1.6.0/..", "../../../../tmp/x", "v1.6", "1.6.0", "v01.6.0", "V1.6.0",
			"v1.6.0+build.1", "v1.6.0\nv1.9.0", "v1.6.0 ", " v1.6.0", "v1.6.0-", "v1.6.0-rc..1", "v1.6.0-rc/1", "latest/../v1.9.0",
			"$(touch PWNED)", "v1.6.0;touch PWNED", "v1.6.0%2F..%2Fv1.9.0", "v1.6.0?x=1", "v1.6.0#x", "v1 ", "v01", "v1.x",
		} {
			downloads.reset()
			apiReqs.reset()
			cache := t.TempDir()
			for _, env := range []string{"INPUT_VERSION=" + v, "ACTION_REF=" + v} {
				r := install(t, cache, env)
				if r.code != 2 {
					t.Errorf("%q: exit %d, want 2 (invalid input)\nstderr: %s", env, r.code, r.stderr)
				}
			}
			if got := append(downloads.list(), apiReqs.list()...); len(got) != 0 || len(cacheFiles(t, cache)) != 0 {
				t.Errorf("version %q: requests %v, cache %v; want none before the version is valid", v, got, cacheFiles(t, cache))
			}
		}
		if _, err := os.Stat("PWNED"); err == nil {
			t.Error("a version input ran a command")
		}
		// The installer that instances use refuses the same, before any download.
		downloads.reset()
		for _, v := range []string{"v1.6.0/../../v1.9.0", "v1", "../x", "v1.6.0\nv1.9.0"} {
			dir := filepath.Join(t.TempDir(), "bin")
			r := runScript(t, "sh", "../deploy/hooks/lockstep-install.sh", []string{"LOCKSTEP_RELEASE_URL=" + dl.URL, "CURL_CA_BUNDLE=" + ca}, v, dir)
			if _, err := os.Stat(dir); r.code != 2 || err == nil {
				t.Errorf("lockstep-install.sh %q: exit %d, %s exists: %v; want 2 and nothing", v, r.code, dir, err == nil)
			}
		}
		if got := downloads.list(); len(got) != 0 {
			t.Errorf("lockstep-install.sh with invalid versions downloaded %v", got)
		}
	})

	t.Run("a tool-cache hit is verified again before use", func(t *testing.T) {
		cache := t.TempDir()
		if r := install(t, cache, "INPUT_VERSION=v1.6.0"); r.code != 0 {
			t.Fatalf("first install: exit %d\n%s", r.code, r.stderr)
		}
		dir := filepath.Join(cache, "lockstep", "1.6.0", runtime.GOARCH)
		// Untouched: the archive is not downloaded again, checksums.txt is.
		downloads.reset()
		r := install(t, cache, "INPUT_VERSION=v1.6.0")
		if r.code != 0 || installed(t, r.stdout) != "v1.6.0" || !strings.Contains(r.stderr, "verified again") ||
			!slices.Equal(downloads.list(), []string{"/v1.6.0/checksums.txt"}) {
			t.Errorf("cache hit: exit %d, %q, downloads %v, stderr %s", r.code, r.stdout, downloads.list(), r.stderr)
		}
		evil := []byte("#!/bin/sh\necho evil >>\"$FAKE_MARK\"\n")
		for _, tt := range []struct {
			name   string
			poison func(t *testing.T)
		}{
			{"the binary replaced", func(t *testing.T) {
				os.WriteFile(filepath.Join(dir, "lockstep"), evil, 0o755)
			}},
			{"the binary and its archive replaced together", func(t *testing.T) {
				os.WriteFile(filepath.Join(dir, "lockstep"), evil, 0o755)
				os.WriteFile(filepath.Join(dir, archiveName("v1.6.0")), tarGz(t, evil), 0o644)
			}},
			{"the archive truncated", func(t *testing.T) {
				os.WriteFile(filepath.Join(dir, archiveName("v1.6.0")), releases["v1.6.0"][archiveName("v1.6.0")][:10], 0o644)
			}},
		} {
			t.Run(tt.name, func(t *testing.T) {
				if r := install(t, cache, "INPUT_VERSION=v1.6.0"); r.code != 0 {
					t.Fatalf("a fresh install: exit %d\n%s", r.code, r.stderr)
				}
				tt.poison(t)
				mark := filepath.Join(t.TempDir(), "ran")
				// As a job runs it: the step fails, says why, and never runs the binary.
				ar := runAction(t, "", t.TempDir(), map[string]string{"RELEASE": "web", "GENERATION": "1", "VERSION": "v1.6.0",
					"DOWNLOAD_URL": dl.URL, "VERIFY_SIGNATURE": "false"},
					"RUNNER_OS=Linux", "RUNNER_ARCH="+runnerArch, "RUNNER_TOOL_CACHE="+cache, "CURL_CA_BUNDLE="+ca, "FAKE_MARK="+mark)
				if ar.code != 1 || !strings.Contains(ar.stdout, "::error title=lockstep install::the tool cache's") {
					t.Errorf("poisoned cache: exit %d, stdout %q; want 1 and an annotation naming the tool cache\nstderr: %s", ar.code, ar.stdout, ar.stderr)
				}
				if _, err := os.Stat(mark); err == nil {
					t.Error("a binary from the poisoned cache ran")
				}
				if got := cacheFiles(t, cache); len(got) != 0 {
					t.Errorf("the poisoned copy is still in the tool cache: %v", got)
				}
			})
		}
		// A planted binary with a completion mark but no archive is no hit:
		// the verified release replaces it.
		os.MkdirAll(dir, 0o755)
		os.WriteFile(filepath.Join(dir, "lockstep"), evil, 0o755)
		os.WriteFile(dir+".complete", nil, 0o644)
		if r := install(t, cache, "INPUT_VERSION=v1.6.0"); r.code != 0 || installed(t, r.stdout) != "v1.6.0" {
			t.Errorf("a planted binary: exit %d, installed %q; want the verified v1.6.0 in its place\n%s", r.code, r.stdout, r.stderr)
		}
	})

	t.Run("with no signature verified the step says so", func(t *testing.T) {
		for _, vs := range []string{"false", "auto"} { // auto: no cosign on the PATH
			ar := runAction(t, "", t.TempDir(), map[string]string{"RELEASE": "web", "GENERATION": "1", "VERSION": "v1.6.0",
				"DOWNLOAD_URL": dl.URL, "VERIFY_SIGNATURE": vs},
				"RUNNER_OS=Linux", "RUNNER_ARCH="+runnerArch, "RUNNER_TOOL_CACHE="+t.TempDir(), "CURL_CA_BUNDLE="+ca, "PATH=/usr/bin:/bin")
			if !strings.Contains(ar.stdout, "::warning title=lockstep install::lockstep v1.6.0: checksums.txt's signature was NOT verified") {
				t.Errorf("verify-signature %s: stdout %q; want a warning that no signature was verified", vs, ar.stdout)
			}
			if !strings.Contains(ar.stderr, "NO signature verified") || strings.Contains(ar.stderr, "signature verified (") {
				t.Errorf("verify-signature %s: the log claims more than was checked:\n%s", vs, ar.stderr)
			}
			// It did install and run the release (the fake refuses record: exit 2).
			if ar.code != 2 || !strings.Contains(ar.stdout, "::error title=lockstep record::this is the fake release v1.6.0") {
				t.Errorf("verify-signature %s: exit %d, stdout %q; want the installed release run", vs, ar.code, ar.stdout)
			}
		}
		// cosign on the PATH: it is asked about this release's signature,
		// and its answer decides.
		for _, tt := range []struct {
			cosignExit int
			code       int
		}{{0, 0}, {1, 1}} {
			bin := t.TempDir()
			args := filepath.Join(bin, "args")
			os.WriteFile(filepath.Join(bin, "cosign"), fmt.Appendf(nil, "#!/bin/sh\necho \"$@\" >%s\nexit %d\n", args, tt.cosignExit), 0o755)
			cache := t.TempDir()
			notes := filepath.Join(t.TempDir(), "notes")
			r := install(t, cache, "INPUT_VERSION=v1.6.0", "INPUT_VERIFY_SIGNATURE=auto", "PATH="+bin+":/usr/bin:/bin", "ACTION_ANNOTATIONS="+notes)
			a, _ := os.ReadFile(args)
			n, _ := os.ReadFile(notes)
			if r.code != tt.code || !strings.Contains(string(a), "verify-blob --bundle") ||
				!strings.Contains(string(a), "--certificate-identity https://github.com/lockstep-dev/lockstep/.github/workflows/release.yml@refs/tags/v1.6.0") {
				t.Errorf("cosign exiting %d: exit %d (want %d), cosign %q\n%s", tt.cosignExit, r.code, tt.code, a, r.stderr)
			}
			if tt.code == 0 && (strings.Contains(string(n), "warning") || !strings.Contains(r.stderr, "checksums.txt's signature verified")) {
				t.Errorf("a verified signature: annotations %q, stderr %s", n, r.stderr)
			}
			if tt.code != 0 && len(cacheFiles(t, cache)) != 0 {
				t.Errorf("a signature that does not verify left %v in the tool cache", cacheFiles(t, cache))
			}
		}
	})

	t.Run("a plain-http download is refused unless allowed", func(t *testing.T) {
		var plain requests
		httpSrv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			plain.add(r)
			tag, name, _ := strings.Cut(strings.TrimPrefix(r.URL.Path, "/"), "/")
			if b, ok := releases[tag][name]; ok {
				w.Write(b)
				return
			}
			http.NotFound(w, r)
		}))
		defer httpSrv.Close()
		// An https mirror that redirects to plain http: a downgrade.
		downgrade := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, httpSrv.URL+r.URL.Path, http.StatusFound)
		}))
		defer downgrade.Close()
		ca := caBundle(t, dl, api, downgrade)
		for _, tt := range []struct {
			name string
			env  []string
			code int
		}{
			{"an http download-url", []string{"INPUT_DOWNLOAD_URL=" + httpSrv.URL}, 2},
			{"an http mirror from the environment", []string{"INPUT_DOWNLOAD_URL=", "LOCKSTEP_RELEASE_URL=" + httpSrv.URL}, 2},
			{"an https mirror redirecting to http", []string{"INPUT_DOWNLOAD_URL=" + downgrade.URL}, 3},
			{"a file URL", []string{"INPUT_DOWNLOAD_URL=file:///etc"}, 2},
			{"an ftp URL", []string{"INPUT_DOWNLOAD_URL=ftp://127.0.0.1/"}, 2},
			{"a URL with a space", []string{"INPUT_DOWNLOAD_URL=" + dl.URL + " -o /tmp/x"}, 2},
			{"an http releases API", []string{"INPUT_VERSION=v1", "LOCKSTEP_API_URL=" + httpSrv.URL}, 2},
			{"allow-http-download not a boolean", []string{"INPUT_DOWNLOAD_URL=" + httpSrv.URL, "INPUT_ALLOW_HTTP_DOWNLOAD=yes"}, 2},
		} {
			plain.reset()
			cache := t.TempDir()
			r := runScript(t, "bash", "action-install.sh", installEnv(t, cache, ca, append([]string{"INPUT_VERSION=v1.6.0", "LOCKSTEP_API_URL=" + api.URL}, tt.env...)...))
			if r.code != tt.code || len(plain.list()) != 0 || len(cacheFiles(t, cache)) != 0 {
				t.Errorf("%s: exit %d (want %d), plain-http requests %v, cache %v\nstderr: %s", tt.name, r.code, tt.code, plain.list(), cacheFiles(t, cache), r.stderr)
			}
		}
		// Allowed on purpose: installed, still checked against checksums.txt.
		cache := t.TempDir()
		r := runScript(t, "bash", "action-install.sh", installEnv(t, cache, ca, "INPUT_VERSION=v1.6.0", "INPUT_DOWNLOAD_URL="+httpSrv.URL, "INPUT_ALLOW_HTTP_DOWNLOAD=true"))
		if r.code != 0 || installed(t, r.stdout) != "v1.6.0" {
			t.Errorf("allow-http-download true: exit %d, %q\n%s", r.code, r.stdout, r.stderr)
		}
	})

	t.Run("the token goes only to the GitHub API it belongs to", func(t *testing.T) {
		const token = "ghs_theWorkflowsOwnToken"
		list := `[{"tag_name": "v1.6.0", "draft": false, "prerelease": false}]`
		foreign, foreignReqs := apiServer(t, list)
		github, githubReqs := apiServer(t, list)
		// GitHub's API answering with a redirect to another host.
		redirecting := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, foreign.URL+r.URL.Path, http.StatusMovedPermanently)
		}))
		defer redirecting.Close()
		ca := caBundle(t, dl, foreign, github, redirecting)
		for _, tt := range []struct {
			name   string
			env    []string
			leaked *requests
		}{
			{"an API URL from the environment", []string{"GITHUB_API_URL=" + github.URL, "LOCKSTEP_API_URL=" + foreign.URL}, foreignReqs},
			{"GitHub's API redirecting elsewhere", []string{"GITHUB_API_URL=" + redirecting.URL}, foreignReqs},
		} {
			foreignReqs.reset()
			githubReqs.reset()
			r := runScript(t, "bash", "action-install.sh", installEnv(t, t.TempDir(), ca,
				append([]string{"ACTION_REF=v1", "GITHUB_TOKEN=" + token, "INPUT_DOWNLOAD_URL=" + dl.URL}, tt.env...)...))
			got := tt.leaked.list()
			if r.code != 0 || len(got) == 0 {
				t.Fatalf("%s: exit %d, requests %v\n%s", tt.name, r.code, got, r.stderr)
			}
			for _, g := range got {
				if strings.Contains(g, token) {
					t.Errorf("%s: the token reached another host: %s", tt.name, g)
				}
			}
			if len(githubReqs.list()) != 0 {
				t.Errorf("%s: GitHub's API asked although another was named: %v", tt.name, githubReqs.list())
			}
		}
		// The API it belongs to gets it (the control).
		githubReqs.reset()
		r := runScript(t, "bash", "action-install.sh", installEnv(t, t.TempDir(), ca,
			"ACTION_REF=v1", "GITHUB_TOKEN="+token, "INPUT_DOWNLOAD_URL="+dl.URL, "GITHUB_API_URL="+github.URL))
		if want := []string{"/repos/lockstep-dev/lockstep/releases Bearer " + token}; r.code != 0 || !slices.Equal(githubReqs.list(), want) {
			t.Errorf("GitHub's own API: exit %d, requests %v, want %v\n%s", r.code, githubReqs.list(), want, r.stderr)
		}
		// The binary it installed never sees the token.
		mark := filepath.Join(t.TempDir(), "ran")
		runAction(t, "", t.TempDir(), map[string]string{"RELEASE": "web", "GENERATION": "1", "DOWNLOAD_URL": dl.URL, "VERIFY_SIGNATURE": "false"},
			"ACTION_REF=v1", "GITHUB_TOKEN="+token, "GITHUB_API_URL="+github.URL, "RUNNER_OS=Linux", "RUNNER_ARCH="+runnerArch,
			"RUNNER_TOOL_CACHE="+t.TempDir(), "CURL_CA_BUNDLE="+ca, "FAKE_MARK="+mark)
		env, err := os.ReadFile(mark + ".env")
		if err != nil || strings.Contains(string(env), token) {
			t.Errorf("lockstep ran with the token in its environment (or never ran: %v)", err)
		}
	})

	t.Run("a refused download leaves nothing in the tool cache", func(t *testing.T) {
		bad := fakeRelease(t, "v1.6.0")
		a := archiveName("v1.6.0")
		bad[a] = tarGz(t, []byte("#!/bin/sh\necho evil\n"))
		for _, tt := range []struct {
			name  string
			files map[string][]byte
			code  int
		}{
			{"a bad checksum", bad, 1},
			{"checksums.txt naming another archive", map[string][]byte{"checksums.txt": []byte(sha256Hex(bad[a]) + "  lockstep_1.6.0_linux_other.tar.gz\n"), a: bad[a]}, 1},
			{"the archive missing", map[string][]byte{"checksums.txt": releases["v1.6.0"]["checksums.txt"]}, 3},
			{"checksums.txt missing", map[string][]byte{a: releases["v1.6.0"][a]}, 3},
		} {
			srv, _ := releasesServer(t, map[string]map[string][]byte{"v1.6.0": tt.files})
			cache := t.TempDir()
			r := runScript(t, "bash", "action-install.sh", installEnv(t, cache, caBundle(t, srv), "INPUT_VERSION=v1.6.0", "INPUT_DOWNLOAD_URL="+srv.URL))
			if r.code != tt.code || len(cacheFiles(t, cache)) != 0 || r.stdout != "" {
				t.Errorf("%s: exit %d (want %d), stdout %q, cache %v\nstderr: %s", tt.name, r.code, tt.code, r.stdout, cacheFiles(t, cache), r.stderr)
			}
		}
	})
}
