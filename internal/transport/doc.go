// Package transport is the one HTTP layer every lockstep call goes through:
// the network discipline of docs/network.md, whose defaults are DefaultPolicy.
//
// Every attempt has a timeout; connections are reused (bodies are drained
// on Close); each host has a cap on requests in flight (not only on
// connections: HTTP/2 multiplexes) and the client an optional global rate
// limit. Retries use capped exponential backoff with full jitter, honour
// Retry-After (never retrying earlier than asked; a request to wait longer
// than MaxRetryAfter ends the retries), retry only what can succeed
// (timeouts, resets, refused connections, 429, 502, 503, 504; never 403 or
// 404) and draw on a retry budget shared by the whole client, so that
// retries never exceed a fixed share of requests plus a small floor.
// Redirects are capped; a redirect chain that revisits a URL or a CDN-Loop
// header (RFC 8586) naming one CDN twice is a *LoopError; the TLS
// certificate of every endpoint touched is recorded, including one that
// failed to verify.
//
// go-containerregistry and the AWS SDK keep their own retryers: they take
// [Client.Transport], which applies everything here except retries, and are
// configured from the same [Policy] by the ggcrretry and awsretry packages.
package transport
