package registry

import (
	"io"
	"log"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
)

func nopLogger() *log.Logger { return log.New(io.Discard, "", 0) }

func mustRef(t testing.TB, s string) name.Reference {
	t.Helper()
	r, err := name.ParseReference(s)
	if err != nil {
		t.Fatal(err)
	}
	return r
}
