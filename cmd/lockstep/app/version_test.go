package app

import (
	"encoding/json"
	"runtime"
	"strings"
	"testing"
)

func TestVersionDevelopmentBuild(t *testing.T) {
	t.Parallel()
	code, out, errs := run(t, "version")
	if code != 0 {
		t.Fatalf("version: exit %d, stderr %s", code, errs)
	}
	if !strings.HasPrefix(out, "lockstep dev (development build, not a release)\n") {
		t.Errorf("version of an unstamped test binary = %q, want it to say it is a development build", out)
	}
	if !strings.Contains(out, "go:       "+runtime.Version()+"\n") {
		t.Errorf("version = %q, want the Go version %s", out, runtime.Version())
	}

	code, out, errs = run(t, "version", "--format", "json")
	if code != 0 {
		t.Fatalf("version --format json: exit %d, stderr %s", code, errs)
	}
	var b buildInfo
	dec := json.NewDecoder(strings.NewReader(out))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&b); err != nil {
		t.Fatalf("version --format json = %q: %v", out, err)
	}
	if b.Release || b.Version != "dev" || b.GoVersion != runtime.Version() || b.Platform != runtime.GOOS+"/"+runtime.GOARCH {
		t.Errorf("version --format json = %+v, want an unreleased dev build of %s on %s/%s", b, runtime.Version(), runtime.GOOS, runtime.GOARCH)
	}
}

func TestVersionStamped(t *testing.T) {
	// Not parallel: it sets the stamped Version, Commit and Date.
	defer func(v, c, d string) { Version, Commit, Date = v, c, d }(Version, Commit, Date)
	Version, Commit, Date = "1.2.3", "0123456789abcdef0123456789abcdef01234567", "2026-12-01T20:00:00Z"

	code, out, _ := run(t, "version")
	want := "lockstep 1.2.3\ncommit:   0123456789abcdef0123456789abcdef01234567\nbuilt:    2026-12-01T20:00:00Z\n"
	if code != 0 || !strings.HasPrefix(out, want) {
		t.Errorf("stamped version = %d %q, want 0 and a prefix %q", code, out, want)
	}
	_, out, _ = run(t, "version", "--format=json")
	var b buildInfo
	if err := json.Unmarshal([]byte(out), &b); err != nil {
		t.Fatal(err)
	}
	if !b.Release || b.Version != "1.2.3" || b.Commit != Commit || b.Date != Date || b.Modified {
		t.Errorf("stamped version --format json = %+v", b)
	}
}

func TestVersionBadFormat(t *testing.T) {
	t.Parallel()
	if code, _, errs := run(t, "version", "--format", "yaml"); code != 2 {
		t.Errorf("version --format yaml: exit %d (%s), want 2", code, errs)
	}
}

// TestVersionSnapshot: a snapshot build of the release pipeline is stamped
// like a release and says it is none, in text and in JSON.
func TestVersionSnapshot(t *testing.T) {
	// Not parallel: it sets the stamped Version, Commit, Date and Snapshot.
	defer func(v, c, d, s string) { Version, Commit, Date, Snapshot = v, c, d, s }(Version, Commit, Date, Snapshot)
	Version, Commit, Date, Snapshot = "1.2.4-snapshot.0123456", "0123456789abcdef0123456789abcdef01234567", "2026-12-01T20:00:00Z", "true"
	if code, out, _ := run(t, "version"); code != 0 || !strings.HasPrefix(out, "lockstep 1.2.4-snapshot.0123456 (snapshot build, not a release)\n") {
		t.Errorf("snapshot version = %d %q", code, out)
	}
	_, out, _ := run(t, "version", "--format=json")
	var b buildInfo
	if err := json.Unmarshal([]byte(out), &b); err != nil {
		t.Fatal(err)
	}
	if b.Release || !b.Snapshot || b.Commit != Commit {
		t.Errorf("snapshot version --format json = %+v, want a snapshot, not a release", b)
	}
}
