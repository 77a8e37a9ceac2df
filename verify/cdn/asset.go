package cdn

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/lockstep-dev/lockstep/internal/transport"
	"github.com/lockstep-dev/lockstep/manifest"
)

// checker checks one asset at one URL.
type checker struct {
	hc   *http.Client
	full bool
	etag bool
	ua   string
	// requireContent makes a size-only check StatusSizeOnly.
	requireContent bool
}

func (c *checker) check(ctx context.Context, f manifest.File, u string) Result {
	res := Result{Path: f.Path, URL: u}
	if c.full || wantsBytes(f) {
		c.get(ctx, f, &res)
		return res
	}
	resp, ok := c.send(ctx, http.MethodHead, u, false, &res)
	if !ok {
		return res
	}
	resp.Body.Close()
	if resp.StatusCode == http.StatusMethodNotAllowed || resp.StatusCode == http.StatusNotImplemented ||
		(resp.StatusCode == http.StatusOK && resp.ContentLength < 0) {
		// HEAD refused, or no length: ask for the first byte instead.
		if resp, ok = c.send(ctx, http.MethodGet, u, true, &res); !ok {
			return res
		}
		resp.Body.Close()
	}
	if !c.status(resp, &res) {
		return res
	}
	size := resp.ContentLength
	if resp.StatusCode == http.StatusPartialContent || resp.StatusCode == http.StatusRequestedRangeNotSatisfiable {
		size = contentRangeTotal(resp.Header.Get("Content-Range"))
	}
	switch {
	case size < 0:
		res.Status, res.Reason = StatusUnreachable, "the CDN gave no size (no Content-Length, no Content-Range)"
	case size != f.Size:
		res.Status, res.Reason = StatusWrongSize, fmt.Sprintf("%d bytes, want %d", size, f.Size)
	default:
		res.Size = size
		c.digests(resp.Header, f, &res)
	}
	return res
}

// get downloads the asset, hashing while streaming, and never reads more
// than its recorded size plus one byte.
func (c *checker) get(ctx context.Context, f manifest.File, res *Result) {
	resp, ok := c.send(ctx, http.MethodGet, res.URL, false, res)
	if !ok {
		return
	}
	if !c.status(resp, res) {
		resp.Body.Close()
		return
	}
	if resp.ContentLength >= 0 && resp.ContentLength != f.Size {
		transport.Abandon(resp)
		res.Status, res.Reason = StatusWrongSize, fmt.Sprintf("%d bytes, want %d", resp.ContentLength, f.Size)
		return
	}
	h := sha256.New()
	n, err := io.Copy(h, io.LimitReader(resp.Body, f.Size+1))
	transport.Abandon(resp)
	switch {
	case err != nil:
		res.Status, res.Reason = StatusUnreachable, fmt.Sprintf("reading the body after %d bytes: %v", n, err)
	case n > f.Size:
		res.Status, res.Reason = StatusWrongSize, fmt.Sprintf("more than %d bytes", f.Size)
	case n < f.Size:
		res.Status, res.Reason = StatusWrongSize, fmt.Sprintf("%d bytes, want %d", n, f.Size)
	default:
		res.Size = n
		if got := hex.EncodeToString(h.Sum(nil)); got != f.SHA256 {
			res.Status, res.Reason = StatusWrongContent, fmt.Sprintf("the bytes hash to sha256:%s, want sha256:%s", got, f.SHA256)
			return
		}
		res.Verified = append(res.Verified, "body")
		c.digests(resp.Header, f, res)
	}
}

// send sends one request; on failure it classifies res and returns false.
func (c *checker) send(ctx context.Context, method, u string, firstByte bool, res *Result) (*http.Response, bool) {
	req, err := http.NewRequestWithContext(ctx, method, u, nil)
	if err != nil {
		res.Status, res.Reason = StatusUnreachable, err.Error()
		return nil, false
	}
	// The recorded size is of the bytes, not of a compressed encoding.
	req.Header.Set("Accept-Encoding", "identity")
	req.Header.Set("User-Agent", c.ua)
	if firstByte {
		req.Header.Set("Range", "bytes=0-0")
	}
	res.Method = method
	if firstByte {
		res.Method = "GET (Range: bytes=0-0)"
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		var le *transport.LoopError
		var ne net.Error
		switch {
		case ctx.Err() != nil:
			res.Status, res.Reason = StatusUnreachable, "check cancelled: "+ctx.Err().Error()
		case errors.Is(err, context.DeadlineExceeded), errors.As(err, &ne) && ne.Timeout():
			res.Status, res.Reason = StatusUnreachable, "timed out: "+err.Error()
		case errors.As(err, &le):
			res.Status, res.Reason = StatusLoop, le.Error()
		case transport.IsTLSError(err):
			res.Status, res.Reason = StatusTLS, err.Error()
		default:
			res.Status, res.Reason, res.Err = StatusUnreachable, err.Error(), err
		}
		return nil, false
	}
	res.HTTPStatus = resp.StatusCode
	return resp, true
}

// status classifies a response's status: true when it carries the asset.
func (c *checker) status(resp *http.Response, res *Result) bool {
	switch resp.StatusCode {
	case http.StatusOK, http.StatusPartialContent:
		return true
	case http.StatusRequestedRangeNotSatisfiable:
		// The answer to bytes=0-0 for an empty file.
		return contentRangeTotal(resp.Header.Get("Content-Range")) == 0
	case http.StatusForbidden, http.StatusNotFound, http.StatusGone:
		res.Status, res.Reason = StatusMissing, resp.Status
	default:
		res.Status, res.Reason = StatusUnreachable, resp.Status
	}
	return false
}

// digests compares every SHA-256 the headers state with the recorded one.
func (c *checker) digests(h http.Header, f manifest.File, res *Result) {
	for _, cl := range headerDigests(h, c.etag) {
		if cl.hex != f.SHA256 {
			res.Status, res.Reason = StatusWrongContent, fmt.Sprintf("%s says sha256:%s, want sha256:%s", cl.header, cl.hex, f.SHA256)
			return
		}
		res.Verified = append(res.Verified, cl.header)
	}
	res.Status, res.Compared = StatusOK, ComparedSize
	switch {
	case slices.Contains(res.Verified, "body"):
		res.Compared = ComparedBytes
	case len(res.Verified) > 0:
		res.Compared = ComparedChecksum
	case c.requireContent:
		res.Status, res.Reason = StatusSizeOnly, "only the size was compared: the CDN states no checksum (a full check hashes the bytes)"
	}
}

// contentRangeTotal returns the complete length of a Content-Range
// ("bytes 0-0/1234", "bytes */1234"), or -1.
func contentRangeTotal(v string) int64 {
	_, total, ok := strings.Cut(strings.TrimPrefix(strings.TrimSpace(v), "bytes "), "/")
	if !ok {
		return -1
	}
	n, err := strconv.ParseInt(strings.TrimSpace(total), 10, 64)
	if err != nil || n < 0 {
		return -1
	}
	return n
}
