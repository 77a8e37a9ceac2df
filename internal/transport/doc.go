// Package transport is the one HTTP layer every lockstep call goes through:
// the network discipline of the README.
//
// Every request has a timeout; connections are reused; each host has a
// concurrency cap and the client an optional global rate limit. Retries use
// capped exponential backoff with full jitter, honour Retry-After (capped),
// retry only what can succeed (timeouts, resets, 429, 502, 503, 504; never
// 403 or 404) and draw on a retry budget, so that retries never exceed a
// fixed share of requests. Redirects are capped, a redirect chain that
// revisits a URL or a CDN-Loop header (RFC 8586) naming one CDN twice is a
// *LoopError, and the TLS certificate expiry of every endpoint touched is
// recorded.
//
// go-containerregistry and the AWS SDK keep their own retryers; they take
// [Client.Transport], which applies everything here except retries, and
// are configured from the same [Policy].
package transport
