// Package cdn proves that every asset of a release is on its CDN, byte for
// byte, without ever becoming a retry storm: every request goes through
// internal/transport.
//
// [Check] sends, for every asset and every CDN base, a HEAD (a ranged GET,
// "Range: bytes=0-0", where HEAD is refused with 405 or 501 or gives no
// length) and wants 200 (or 206), the recorded size (Content-Length, or the
// total of Content-Range) and, where the CDN states a SHA-256
// (x-amz-checksum-sha256, a strong ETag in hex or base64, Digest,
// Repr-Digest), the recorded hash. With Options.Full it downloads and
// hashes every byte while streaming, never reading more than the recorded
// size plus one byte. Each check is classified (ok, missing on 403/404/410,
// wrong-size, wrong-content, unreachable after retries, loop, tls-error),
// and the certificate of every TLS endpoint touched is reported, with a
// warning within Options.TLSWarn of its expiry.
//
// An origin (Options.Origin or the manifest's assets.origin) that is the
// CDN itself, by scheme, host and port or by resolved address and port, is
// refused before any request with an *OriginError, an input error.
//
// [Report.Err] turns a report into the verdict: a *verdict.MismatchError
// (exit 1) for any missing, wrong, looping or TLS-failing asset, an
// *verdict.UnavailableError (exit 3) when any asset could not be checked.
// [Report.Write] renders text, JSON, Markdown (a GitHub job summary) or
// SARIF 2.1.0.
package cdn
