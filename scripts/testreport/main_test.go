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
	want := "=== RUN   TestA\n--- PASS: TestA (2.50s)\nok  \tp\t2.6s\n# q\nq/x.go:1: vet says something\n"
	if out.String() != want {
		t.Errorf("output\n%q\nwant\n%q", out.String(), want)
	}
	if len(pkgs) != 2 || pkgs[0] != (timing{"p", 2.6, "pass"}) || pkgs[1] != (timing{"q", 0.1, "fail"}) {
		t.Errorf("packages %v", pkgs)
	}
	if len(tests) != 1 || tests[0] != (timing{"p.TestA", 2.5, "pass"}) {
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
