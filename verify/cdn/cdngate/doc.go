// Package cdngate is the boot gate's CDN check over verify/cdn: Checker
// implements admission.CDNChecker, so that admission imports no verify
// package. The CLI (admit, the agent, the webhook) and the demo give it to
// every admission.Config they build.
package cdngate
