// Package demo is `lockstep demo`: the product's main job, end to end, on
// one machine with no network. It starts an in-memory registry and a CDN
// (a file server over a generated asset tree) on loopback, from package
// servers, which imports nothing of the tests; then it runs a list of
// named steps: push an image, pin it, make a key pair, record release v1
// with its assets, verify and publish it, admit an instance, re-push other
// bytes under the same tag, refuse the moved tag and the instance that
// runs it, and so on.
//
// Every `$ lockstep …` line the demo prints is a command it runs through
// its Runner (the CLI itself, in process: cmd/lockstep/app.Run, handed in
// by the demo command, as this package cannot import it), followed by all
// that command wrote; a step judges by the command's exit code and output
// (Ran.Expect) and by what it left (the manifest written, the store's
// channel). What the world does (CI pushing, uploading, attesting) the
// demo does with library calls and says as prose, never as a `$` line.
//
// Each step is one function over the shared *Env; adding a step is
// writing one function and adding it to Steps. Run returns an error,
// naming the step, as soon as a step does not behave as designed: an
// expected refusal that does not come is a failure.
package demo
