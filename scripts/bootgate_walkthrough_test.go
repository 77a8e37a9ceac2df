package scripts

import (
	"bytes"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"
	"time"
)

// TestBootGateWalkthrough runs scripts/bootgate-walkthrough.sh: the
// README's Docker section done as a user does it, on instances whose PID 1
// is systemd, from the snapshot's .deb. The gate must admit the release
// at boot (the ingress serving only then), and refuse the instance that
// boots after the tag was pushed again (exit 1, image-digest-mismatch in
// the journal, the ingress never started). About a minute and a half warm
// (a few more minutes once per machine for debootstrap), so it runs with
// LOCKSTEP_TEST_FULL=1, as .ci/run sets it.
func TestBootGateWalkthrough(t *testing.T) {
	if os.Getenv("LOCKSTEP_TEST_FULL") != "1" {
		t.Skip("boots two systemd instances on a real dockerd (about 90 s): LOCKSTEP_TEST_FULL=1 scripts/test.sh runs it, as .ci/run does")
	}
	if runtime.GOOS != "linux" || runtime.GOARCH != "amd64" {
		t.Skipf("the walk-through installs the linux/amd64 .deb; this is %s/%s", runtime.GOOS, runtime.GOARCH)
	}
	if os.Geteuid() != 0 {
		t.Fatal("the walk-through starts dockerd and systemd containers: run it as root (as CI does)")
	}
	loadSnapshot(t) // the .deb, checksums.txt and the binary it uses
	cmd := exec.Command("./bootgate-walkthrough.sh", dist)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	start := time.Now()
	err := cmd.Run()
	t.Logf("scripts/bootgate-walkthrough.sh, %s:\n%s", time.Since(start).Round(time.Second), out.String())
	if err != nil {
		t.Fatalf("the walk-through: %v", err)
	}
	for _, want := range []string{
		"instance 1: ADMITTED at boot; the ingress serves",
		"instance 2: REFUSED at boot (image-digest-mismatch); the ingress never started",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the walk-through did not say %q", want)
		}
	}
}
