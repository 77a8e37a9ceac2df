package running

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/lockstep-dev/lockstep/verdict"
)

// maxFile bounds a digest file.
const maxFile = 4 << 10

// File reads the running digest from a file a launch script wrote, e.g.
// `docker image inspect --format '{{.Id}}' app > /run/app/image-id`. The
// file holds one digest or name@digest; surrounding space is ignored.
type File struct {
	Path string
}

var _ Source = File{}

// Observe reads the file. A file that cannot be read is an
// *verdict.UnavailableError.
func (f File) Observe(ctx context.Context) (*Observation, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	fh, err := os.Open(f.Path)
	if err != nil {
		return nil, verdict.Unavailable("running-digest file "+f.Path, err)
	}
	defer fh.Close()
	b, err := io.ReadAll(io.LimitReader(fh, maxFile+1))
	if err != nil {
		return nil, verdict.Unavailable("running-digest file "+f.Path, err)
	}
	if len(b) > maxFile {
		return nil, fmt.Errorf("running-digest file %s is over %d bytes", f.Path, maxFile)
	}
	o := &Observation{Source: "file:" + f.Path}
	v := strings.TrimSpace(string(b))
	if v == "" {
		return nil, fmt.Errorf("running-digest file %s is empty", f.Path)
	}
	o.addImageID(v)
	return o, nil
}

// Given is a digest stated on the command line.
type Given struct {
	Value string
}

var _ Source = Given{}

// Observe returns the digest, or reports it unpinned when it is not a
// canonical digest.
func (g Given) Observe(ctx context.Context) (*Observation, error) {
	o := &Observation{Source: "digest"}
	o.addImageID(g.Value)
	return o, ctx.Err()
}
