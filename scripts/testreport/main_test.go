package main

import (
	"strings"
	"testing"
	"time"
)

func TestCopyOutput(t *testing.T) {
	in := `{"Action":"start","Package":"p"}
{"Action":"run","Package":"p","Test":"TestA"}
{"Action":"output","Package":"p","Test":"TestA","Output":"=== RUN   TestA\n"}
{"Action":"output","Package":"p","Test":"TestA","Output":"--- PASS: TestA (2.50s)\n"}
{"Action":"pass","Package":"p","Test":"TestA","Elapsed":2.5}
{"Action":"pass","Package":"p","Test":"TestA/sub","Elapsed":1}
{"Action":"run","Package":"p","Test":"TestB"}
{"Action":"output","Package":"p","Test":"TestB","Output":"    b_test.go:9: wrong\n"}
{"Action":"output","Package":"p","Test":"TestB","Output":"--- FAIL: TestB (0.10s)\n"}
{"Action":"fail","Package":"p","Test":"TestB","Elapsed":0.1}
{"Action":"output","Package":"p","Output":"PASS\n"}
{"Action":"output","Package":"p","Output":"ok  \tp\t2.6s\n"}
{"Action":"pass","Package":"p","Elapsed":2.6}
# q
q/x.go:1: vet says something
{"Action":"fail","Package":"q","Elapsed":0.1}
`
	var out strings.Builder
	pkgs, tests, err := copyOutput(strings.NewReader(in), &out)
	if err != nil {
		t.Fatal(err)
	}
	// TestA passed: its output is not printed, as go test without -v.
	want := "    b_test.go:9: wrong\n--- FAIL: TestB (0.10s)\nok  \tp\t2.6s\n# q\nq/x.go:1: vet says something\n"
	if out.String() != want {
		t.Errorf("output\n%q\nwant\n%q", out.String(), want)
	}
	if len(pkgs) != 2 || pkgs[0] != (timing{"p", 2.6, "pass"}) || pkgs[1] != (timing{"q", 0.1, "fail"}) {
		t.Errorf("packages %v", pkgs)
	}
	if len(tests) != 2 || tests[0] != (timing{"p.TestA", 2.5, "pass"}) || tests[1] != (timing{"p.TestB", 0.1, "fail"}) {
		t.Errorf("tests %v (subtests are not listed)", tests)
	}
	var b strings.Builder
	breakdown(&b, pkgs, tests, 1, 3*time.Second)
	for _, s := range []string{"2 packages in 3 s", "2.6 s  pass  p\n", "2.5 s  pass  p.TestA\n"} {
		if !strings.Contains(b.String(), s) {
			t.Errorf("breakdown lacks %q:\n%s", s, b.String())
		}
	}
	if strings.Contains(b.String(), "  q\n") {
		t.Errorf("breakdown lists more than the top 1 package:\n%s", b.String())
	}
}

// TestCopyOutputUnendedTest: a test that never ends (a panic, the
// timeout) has its output printed when its package ends.
func TestCopyOutputUnendedTest(t *testing.T) {
	in := `{"Action":"run","Package":"p","Test":"TestHang"}
{"Action":"output","Package":"p","Test":"TestHang","Output":"panic: test timed out after 20m0s\n"}
{"Action":"output","Package":"p","Output":"FAIL\tp\t1200.0s\n"}
{"Action":"fail","Package":"p","Elapsed":1200}
`
	var out strings.Builder
	if _, _, err := copyOutput(strings.NewReader(in), &out); err != nil {
		t.Fatal(err)
	}
	if want := "FAIL\tp\t1200.0s\npanic: test timed out after 20m0s\n"; out.String() != want {
		t.Errorf("output %q, want %q", out.String(), want)
	}
}
