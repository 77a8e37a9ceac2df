// Command testreport reads `go test -json` on standard input, prints what
// plain `go test` prints (a line a package, and the output of a test only
// when it fails: -json makes the run verbose, the log need not be), and
// at the end writes to standard error where the time went: the slowest
// packages and tests, and the run's wall time. scripts/test.sh pipes the
// suite through it; with -o FILE it also keeps the breakdown in FILE.
//
//	go test -json ./... | go run ./scripts/testreport [-top N] [-o FILE]
//
// It exits 0 whatever the tests did: the test command takes go test's own
// exit status.
package main

import (
	"bufio"
	"cmp"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"
)

// event is one line of go test -json (cmd/test2json).
type event struct {
	Time    time.Time
	Action  string
	Package string
	Test    string
	Elapsed float64
	Output  string
}

type timing struct {
	name    string
	seconds float64
	action  string
}

func main() {
	top := flag.Int("top", 12, "how many of the slowest packages and tests to list")
	out := flag.String("o", "", "also write the breakdown to this file")
	flag.Parse()
	start := time.Now()
	pkgs, tests, err := copyOutput(os.Stdin, os.Stdout)
	if err != nil {
		fmt.Fprintf(os.Stderr, "testreport: %v\n", err)
	}
	var b strings.Builder
	breakdown(&b, pkgs, tests, *top, time.Since(start))
	fmt.Fprint(os.Stderr, b.String())
	if *out != "" {
		if err := os.WriteFile(*out, []byte(b.String()), 0o644); err != nil {
			fmt.Fprintf(os.Stderr, "testreport: %v\n", err)
		}
	}
}

// copyOutput writes to w what go test without -v prints: every package's
// own lines ("ok", "FAIL", a panic), and a test's output only when that
// test fails; and returns the packages' and top-level tests' times. A line
// that is not JSON (go vet's or the linker's words) is copied as it is.
func copyOutput(r io.Reader, w io.Writer) (pkgs, tests []timing, err error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64*1024), 16<<20)
	bw := bufio.NewWriter(w)
	defer bw.Flush()
	held := map[[2]string][]string{} // a running test's output, by package and test
	for sc.Scan() {
		line := sc.Bytes()
		var e event
		if len(line) == 0 || line[0] != '{' || json.Unmarshal(line, &e) != nil {
			bw.Write(line)
			bw.WriteByte('\n')
			continue
		}
		key := [2]string{e.Package, e.Test}
		switch {
		case e.Action == "output" && e.Test != "":
			held[key] = append(held[key], e.Output)
		case e.Output != "" && e.Output != "PASS\n":
			bw.WriteString(e.Output)
		}
		switch e.Action {
		case "pass", "fail", "skip":
			if e.Action == "fail" {
				for _, o := range held[key] {
					bw.WriteString(o)
				}
			}
			delete(held, key)
			switch {
			case e.Test == "":
				pkgs = append(pkgs, timing{e.Package, e.Elapsed, e.Action})
				// A package's end: what is held of it now is of tests
				// that never ended (a panic, a timeout): print it.
				for k, out := range held {
					if k[0] == e.Package {
						for _, o := range out {
							bw.WriteString(o)
						}
						delete(held, k)
					}
				}
				bw.Flush() // so that a long run shows its progress
			case !strings.Contains(e.Test, "/"):
				tests = append(tests, timing{e.Package + "." + e.Test, e.Elapsed, e.Action})
			}
		}
	}
	return pkgs, tests, sc.Err()
}

// breakdown writes the slowest packages and tests and the wall time.
func breakdown(w io.Writer, pkgs, tests []timing, top int, wall time.Duration) {
	var sum float64
	for _, p := range pkgs {
		sum += p.seconds
	}
	fmt.Fprintf(w, "== where the test time went: %d packages in %.0f s of wall time (%.0f s summed over packages, which run in parallel)\n",
		len(pkgs), wall.Seconds(), sum)
	list := func(title string, ts []timing) {
		slices.SortFunc(ts, func(a, b timing) int { return cmp.Compare(b.seconds, a.seconds) })
		fmt.Fprintf(w, "%s\n", title)
		for _, t := range ts[:min(top, len(ts))] {
			fmt.Fprintf(w, "  %7.1f s  %-4s  %s\n", t.seconds, t.action, t.name)
		}
	}
	list("slowest packages:", pkgs)
	list("slowest tests:", tests)
}
