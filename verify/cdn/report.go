package cdn

import (
	"errors"
	"fmt"
	"time"

	"github.com/lockstep-dev/lockstep/internal/transport"
	"github.com/lockstep-dev/lockstep/verdict"
)

// Status classifies one asset's check. The values are stable in JSON.
type Status string

// The statuses.
const (
	StatusOK           Status = "ok"
	StatusMissing      Status = "missing"       // 403, 404, 410
	StatusWrongSize    Status = "wrong-size"    // another length
	StatusWrongContent Status = "wrong-content" // a stated hash or the bytes differ
	StatusUnreachable  Status = "unreachable"   // after retries, or another status
	StatusLoop         Status = "loop"          // a redirect loop or chain, or CDN-Loop
	StatusTLS          Status = "tls-error"     // the certificate did not verify
	// StatusSizeOnly is an asset only its size vouches for (no checksum
	// header, no Full), under Options.RequireContent: not verified.
	StatusSizeOnly Status = "size-only"
)

// What an ok asset's check compared (Result.Compared). The values are
// stable in JSON.
const (
	ComparedBytes    = "bytes"    // downloaded and hashed (Full)
	ComparedChecksum = "checksum" // a header stated the recorded SHA-256
	ComparedSize     = "size"     // the size alone: other bytes of that size would pass
)

// Failing reports whether the status is a verdict against the asset
// (exit 1), as opposed to ok or unreachable.
func (s Status) Failing() bool {
	switch s {
	case StatusMissing, StatusWrongSize, StatusWrongContent, StatusLoop, StatusTLS:
		return true
	}
	return false
}

// Result is the check of one asset at one CDN base.
type Result struct {
	Path   string `json:"path"`
	URL    string `json:"url"`
	Status Status `json:"status"`
	// HTTPStatus is the status of the last response, if there was one.
	HTTPStatus int `json:"httpStatus,omitempty"`
	// Method is the request that decided: HEAD, "GET (Range: bytes=0-0)"
	// where HEAD was refused, or GET with Full.
	Method string `json:"method,omitempty"`
	// Size is the size the CDN gave, when it matched.
	Size int64 `json:"size,omitempty"`
	// Verified lists what confirmed the hash: "body" (Full), or the
	// headers that stated it ("x-amz-checksum-sha256", "etag", "digest",
	// "repr-digest"). Empty: the size alone was checked.
	Verified []string `json:"verified,omitempty"`
	// Err is the request's error when it failed before any answer (not
	// in JSON): a caller tells a request its client refused to send or
	// follow (transport.DeniedAddressError, transport.RedirectError) by it.
	Err error `json:"-"`
	// Compared says how much the check of an asset the CDN serves at its
	// size compared: ComparedBytes, ComparedChecksum or ComparedSize.
	Compared string `json:"compared,omitempty"`
	Reason   string `json:"reason,omitempty"`
}

// TLS endpoint statuses.
const (
	TLSOK       = "ok"
	TLSExpiring = "expiring" // a warning: valid, but expires within TLSWarn
	TLSExpired  = "expired"  // a failure
	TLSInvalid  = "invalid"  // a failure: unknown authority, wrong name, …
)

// Endpoint is the certificate of one TLS endpoint the check touched.
type Endpoint struct {
	Host     string    `json:"host"`
	Subject  string    `json:"subject"`
	Issuer   string    `json:"issuer,omitempty"`
	NotAfter time.Time `json:"notAfter"`
	// ExpiresInSeconds is negative once expired.
	ExpiresInSeconds int64  `json:"expiresInSeconds"`
	Status           string `json:"status"`
	Error            string `json:"error,omitempty"`
}

func endpointOf(c transport.Certificate, now time.Time, warn time.Duration) Endpoint {
	left := c.NotAfter.Sub(now)
	e := Endpoint{Host: c.Host, Subject: c.Subject, Issuer: c.Issuer, NotAfter: c.NotAfter.UTC(), ExpiresInSeconds: int64(left / time.Second), Error: c.Error}
	switch {
	case left <= 0:
		e.Status = TLSExpired
	case c.Error != "":
		e.Status = TLSInvalid
	case left < warn:
		e.Status = TLSExpiring
	default:
		e.Status = TLSOK
	}
	return e
}

// Summary counts a Check.
type Summary struct {
	// Checked counts asset × base checks.
	Checked     int `json:"checked"`
	OK          int `json:"ok"`
	Missing     int `json:"missing"`
	Wrong       int `json:"wrong"`
	Unreachable int `json:"unreachable"`
	Loops       int `json:"loops"`
	TLSErrors   int `json:"tlsErrors"`
	// TLSExpiring counts endpoints that expire within the warning window.
	TLSExpiring int `json:"tlsExpiring"`
	// Bytes, Checksum and SizeOnly count the checks by what they compared
	// (Result.Compared); SizeOnly ones are StatusSizeOnly under
	// RequireContent, else ok.
	Bytes    int           `json:"comparedBytes"`
	Checksum int           `json:"comparedChecksum"`
	SizeOnly int           `json:"comparedSizeOnly"`
	Requests int64         `json:"requests"`
	Retries  int64         `json:"retries"`
	Duration time.Duration `json:"durationNanos"`
}

// Report is the outcome of a Check.
type Report struct {
	// Bases are the CDN bases checked.
	Bases []string `json:"bases"`
	// Files counts the files checked at each base; Sampled says they are
	// a sample of the manifest's.
	Files   int  `json:"files"`
	Sampled bool `json:"sampled,omitempty"`
	// Full says every byte was downloaded and hashed.
	Full bool `json:"full,omitempty"`
	// RequireContent says a size-only check was not verified
	// (Options.RequireContent).
	RequireContent bool         `json:"requireContent,omitempty"`
	Origin         *OriginCheck `json:"origin,omitempty"`
	Results        []Result     `json:"results"`
	TLS            []Endpoint   `json:"tls"`
	Summary        Summary      `json:"summary"`
}

func (r *Report) summarize(requests, retries int64, d time.Duration) {
	s := Summary{Requests: requests, Retries: retries, Duration: d}
	for _, res := range r.Results {
		s.Checked++
		switch res.Compared {
		case ComparedBytes:
			s.Bytes++
		case ComparedChecksum:
			s.Checksum++
		case ComparedSize:
			s.SizeOnly++
		}
		switch res.Status {
		case StatusOK:
			s.OK++
		case StatusMissing:
			s.Missing++
		case StatusWrongSize, StatusWrongContent:
			s.Wrong++
		case StatusUnreachable:
			s.Unreachable++
		case StatusLoop:
			s.Loops++
		case StatusTLS:
			s.TLSErrors++
		}
	}
	for _, e := range r.TLS {
		if e.Status == TLSExpiring {
			s.TLSExpiring++
		}
	}
	r.Summary = s
}

// Failed returns the results that are not ok.
func (r *Report) Failed() []Result {
	var out []Result
	for _, res := range r.Results {
		if res.Status != StatusOK {
			out = append(out, res)
		}
	}
	return out
}

// ErrSizeOnly is wrapped by Report.Err when Options.RequireContent is set
// and some asset only its size vouches for: Options.Full hashes the bytes.
var ErrSizeOnly = errors.New("with content required, a size proves nothing")

// Err returns a *verdict.MismatchError for the first missing, wrong, looping
// or TLS-failing asset (exit 1); otherwise an *verdict.UnavailableError if
// any asset was compared by size alone under RequireContent, or if any
// asset was unreachable (exit 3: an asset that could not be checked is
// not verified); otherwise nil. Expiring certificates are warnings, not
// errors.
func (r *Report) Err() error {
	bad := 0
	var first *Result
	for i, res := range r.Results {
		if res.Status.Failing() {
			bad++
			if first == nil {
				first = &r.Results[i]
			}
		}
	}
	if first != nil {
		reason := string(first.Status) + " at " + first.URL
		if bad > 1 {
			reason += fmt.Sprintf(" (and %d more failing)", bad-1)
		}
		return &verdict.MismatchError{Subject: "asset " + first.Path, Reason: reason, Got: first.Reason, Want: "the recorded bytes"}
	}
	if r.RequireContent && r.Summary.SizeOnly > 0 {
		for _, res := range r.Results {
			if res.Status == StatusSizeOnly {
				return &verdict.UnavailableError{Dependency: "CDN", Err: fmt.Errorf(
					"%d of %d checks compared the size only (%s states no checksum header): %w",
					r.Summary.SizeOnly, r.Summary.Checked, res.URL, ErrSizeOnly)}
			}
		}
	}
	for _, res := range r.Results {
		if res.Status == StatusUnreachable {
			msg := res.URL + ": " + res.Reason
			if n := r.Summary.Unreachable; n > 1 {
				msg += fmt.Sprintf(" (and %d more unreachable)", n-1)
			}
			return &verdict.UnavailableError{Dependency: "CDN", Err: errors.New(msg)}
		}
	}
	return nil
}
