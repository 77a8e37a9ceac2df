// Package cdn proves that every asset of a release is on its CDN, byte for
// byte, without ever becoming a retry storm: every request goes through
// internal/transport.
package cdn
