package main

import (
	"testing"

	"github.com/lockstep-dev/lockstep/internal/testkit/depcheck"
)

// testSupport are the packages written for tests: the test kit
// (internal/testkit/: protocol fakes, test PKIs and keys, contract suites,
// the test environment; named by its folder, so a package added to it is
// denied with the rest) and the libraries that exist to serve tests. The
// binary that boots instances links none of them: `lockstep demo` builds
// its servers from cmd/lockstep/internal/demo/servers and
// internal/fixture/dockerapi, which import no test machinery. (Package
// testing and net/http/httptest are not listed: cosign's dependencies
// import them, digitorus/pkcs7 the one, sigstore's pkg/tuf both; no
// package of ours in the binary imports them, which
// TestBinaryLinksNoTestSupport checks too.)
var testSupport = []string{
	"github.com/lockstep-dev/lockstep/internal/testkit/...",
	"github.com/go-rod/rod",
	"github.com/google/go-containerregistry/pkg/registry",
	"github.com/google/go-containerregistry/internal/httptest",
	"github.com/johannesboyne/gofakes3",
}

// TestBinaryLinksNoTestSupport lists what ./cmd/lockstep links and fails
// on any test-support package, naming the import chain that brings it in.
func TestBinaryLinksNoTestSupport(t *testing.T) {
	const binary = "github.com/lockstep-dev/lockstep/cmd/lockstep"
	depcheck.Assert(t, depcheck.Rule{Packages: []string{binary}, Deny: testSupport})
	g, err := depcheck.List(binary)
	if err != nil {
		t.Fatal(err)
	}
	for _, dep := range []string{"testing", "net/http/httptest"} {
		for _, p := range g.Importers(dep) {
			if depcheck.Match("github.com/lockstep-dev/lockstep/...", p) {
				t.Errorf("%s, linked into the binary, imports %s", p, dep)
			}
		}
	}
}

// startWeight are packages whose initialisation every lockstep command
// would pay at start (issue 16), linked for nothing a command needs:
// containerd's client (about a hundred packages; admission/running speaks
// containerd's gRPC API through its generated stubs instead) and go-cmp,
// which only containerd's protobuf helpers imported (2.8 ms of init in
// cmp/internal/function on its own).
var startWeight = []string{
	"github.com/containerd/containerd/v2",
	"github.com/google/go-cmp",
}

// TestBinaryStartWeight fails when the binary links one of startWeight.
func TestBinaryStartWeight(t *testing.T) {
	depcheck.Assert(t, depcheck.Rule{Packages: []string{"github.com/lockstep-dev/lockstep/cmd/lockstep"}, Deny: startWeight})
}
