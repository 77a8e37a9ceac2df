package bench

import (
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"github.com/lockstep-dev/lockstep/internal/testkit/testenv"
)

// TestRunQuick runs `QUICK=1 bench/run.sh` (each benchmark once, on small
// inputs: a check of the runner, not a measurement) and checks that its
// table has a row for every benchmark, each with a positive median on
// both sides and a ratio. It takes about two minutes of both cores, so
// scripts/test.sh runs it only with LOCKSTEP_TEST_FULL=1 (or
// LOCKSTEP_TEST_BENCH=1 alone), which .ci/run sets: every landing still
// runs it, a contributor's run need not.
func TestRunQuick(t *testing.T) {
	if testing.Short() {
		t.Skip("runs every bench script (about two minutes)")
	}
	if os.Getenv("LOCKSTEP_INTEGRATION") == "1" && os.Getenv("LOCKSTEP_TEST_FULL") != "1" && os.Getenv("LOCKSTEP_TEST_BENCH") != "1" {
		t.Skip("runs every bench script (about two minutes): LOCKSTEP_TEST_FULL=1 scripts/test.sh runs it, as .ci/run does")
	}
	for _, bin := range []string{"nginx", "docker-registry", "curl", "python3", "bc", "openssl", "hey"} {
		testenv.Require(t, bin)
	}
	testenv.Require(t, "toxiproxy-server", "../.cache/bin/toxiproxy-server")
	testenv.Require(t, "time", "/usr/bin/time")
	cmd := exec.Command("bash", "run.sh")
	cmd.Env = append(os.Environ(), "QUICK=1", "OUT="+t.TempDir())
	out, err := cmd.Output()
	if err != nil {
		var stderr []byte
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = ee.Stderr
		}
		t.Fatalf("QUICK=1 bench/run.sh: %v\n%s\n%s", err, out, stderr)
	}
	rows := map[string][]string{}
	for line := range strings.SplitSeq(string(out), "\n") {
		cells := strings.Split(line, "|")
		if len(cells) != 10 || strings.TrimSpace(cells[1]) == "benchmark" || strings.HasPrefix(strings.TrimSpace(cells[1]), "---") {
			continue
		}
		for i := range cells {
			cells[i] = strings.TrimSpace(cells[i])
		}
		rows[cells[1]] = cells[1:9]
	}
	for _, name := range []string{"start", "roots", "roots-bundle", "roots-process", "admit", "admit-signed", "closure", "closure-nginx", "closure-rtt30", "closure-rtt30-curl",
		"closure-rtt30-limit", "all-assets-rtt30-curl", "closure-rtt30-bytes", "closure-gates", "closure-gates-outage", "closure-gates-peak", "parse", "parse-digest", "encode", "provenance", "cdn-200", "cdn-h2-200", "pin-warm", "pin-cold", "pin-empty", "pin-shared", "hash", "graph-js",
		"fleet-2000", "fleet-2000-rss", "webhook-p99", "storm-outage", "storm-outage-nobreaker", "storm-recovery"} {
		row, ok := rows[name]
		if !ok {
			t.Errorf("no row %q in bench/run.sh's table:\n%s", name, out)
			continue
		}
		// row: name, lockstep, min, median, anchor, min, median, ratio
		for _, i := range []int{3, 6} {
			v, err := strconv.ParseFloat(strings.Fields(row[i])[0], 64)
			if err != nil || v <= 0 {
				t.Errorf("row %q: median %q is not a positive figure", name, row[i])
			}
		}
		if _, err := strconv.ParseFloat(row[7], 64); err != nil {
			t.Errorf("row %q: ratio %q is not a number", name, row[7])
		}
	}
	if !strings.Contains(string(out), "# load average at the start: ") {
		t.Errorf("bench/run.sh printed no load average:\n%s", out)
	}
}
