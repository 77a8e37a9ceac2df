// Package demo is `lockstep demo`: the product's main job, end to end, on
// one machine with no network. It starts an in-memory registry and a CDN
// (a file server over a generated asset tree) on loopback, from package
// servers, which imports nothing of the tests; then it runs a list of
// named steps, each printing what lockstep said: push an image, pin it, record release v1 with its assets, validate
// the manifest, re-push other bytes under the same tag, and refuse the
// moved tag.
//
// Each step is one function over the shared *Env; adding a step (the boot
// gate, the CDN check, publishing, signing) is writing one function and
// adding it to Steps. Run returns an error, naming the step, as soon as a
// step does not behave as designed: an expected refusal that does not
// come is a failure.
package demo
