// Package bench holds no code: it is the home of the benchmark scripts
// (bench/run.sh runs them all, interleaved against their anchors) and of
// the test that checks bench/run.sh end to end in its QUICK=1 mode.
// The Go programs the scripts use are its sub-packages: cdntree, fleetsim,
// gentree, roots (bench/roots.sh: loading the system's roots), signature,
// startfloor; profile runs lockstep's command line with a CPU
// profile (the profiles of docs/benchmarks.md).
package bench
