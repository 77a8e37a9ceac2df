package cdn

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/lockstep-dev/lockstep/internal/transport"
	"google.golang.org/grpc/test/bufconn"
)

// The storm: a fleet of instances, each with its own client, checks the
// CDN on a steady beat while the CDN goes down (503) for a window and comes
// back. TestStorm asserts the bars the policy guarantees; BenchmarkStorm
// (bench/storm.sh) measures them against issue 16's goals and against the
// client without its breakers. The figures are ratios between runs on the
// same machine, so the machine's speed cancels out.
//
// What holds the bars is the shape of the policy, not timing. A client
// whose host fails sends at most BreakerFailures (3) attempts before the
// host's breaker opens; then nothing until a jittered cool-down of at least
// 0.5 s (doubling) ends, and then one probe. Against one check every
// 500 ms, that is at most 3 requests for the first failing check and one
// per cool-down after it: over an outage of five beats, fewer requests than
// the five the client sends when nothing fails. And a client never replays
// what it was refused, so the recovery has no burst.
type stormShape struct {
	checkers int
	period   time.Duration // each instance checks one asset this often
	run      time.Duration
	down, up time.Duration // the outage: [down, up)
}

// The shape of the benchmark: 1,000 checkers, a check each
// every 500 ms, the CDN down from 2 s to 4.5 s of 7 s.
var stormFull = stormShape{checkers: 1000, period: 500 * time.Millisecond, run: 7 * time.Second,
	down: 2 * time.Second, up: 4500 * time.Millisecond}

// stormTest is TestStorm's shape: the benchmark's with 200 checkers, not
// 1,000. Each checker's client holds its own breakers and budget, so what
// the test asserts are ratios per checker: the same at 1,000 and at 200
// checkers (outage 0.80× fault-free, recovery peak 1.00× steady, back to
// 90% 700 ms after recovery; 1.57× without the breakers), at a sixth of
// the CPU under -race (5.8 s against 38.7 s).
var stormTest = stormShape{checkers: 200, period: stormFull.period, run: stormFull.run,
	down: stormFull.down, up: stormFull.up}

// stormQuick is BenchmarkStorm's shape under LOCKSTEP_STORM_QUICK=1
// (bench/run.sh's QUICK=1): a check of the runner, not a measurement.
var stormQuick = stormShape{checkers: 100, period: 200 * time.Millisecond, run: 4 * time.Second,
	down: 800 * time.Millisecond, up: 1800 * time.Millisecond}

const stormBucket = 100 * time.Millisecond

// stormCDN counts requests per 100 ms bucket since start, and answers 503
// during the outage when down is set.
type stormCDN struct {
	shape   stormShape
	start   time.Time
	down    bool
	buckets []atomic.Int64
}

func (s *stormCDN) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	at := time.Since(s.start)
	if i := int(at / stormBucket); i >= 0 && i < len(s.buckets) {
		s.buckets[i].Add(1)
	}
	if s.down && at >= s.shape.down && at < s.shape.up {
		w.WriteHeader(http.StatusServiceUnavailable)
		return
	}
	w.Header().Set("Content-Length", fmt.Sprint(len(body)))
	if r.Method != http.MethodHead {
		w.Write([]byte(body))
	}
}

// sum counts the requests in [from, to).
func (s *stormCDN) sum(from, to time.Duration) int64 {
	var n int64
	for i := int(from / stormBucket); i < int(to/stormBucket) && i < len(s.buckets); i++ {
		n += s.buckets[i].Load()
	}
	return n
}

// peak is the busiest second (a sliding window of 10 buckets) in [from, to).
func (s *stormCDN) peak(from, to time.Duration) int64 {
	var best int64
	for at := from; at+time.Second <= to; at += stormBucket {
		best = max(best, s.sum(at, at+time.Second))
	}
	return best
}

// stormNet connects the checkers to the CDN: it serves h and returns the
// URL the checkers use, the client options that reach it, and how to stop
// it.
type stormNet func(h http.Handler) (url string, opts []transport.Option, stop func())

// loopbackNet serves the CDN on a loopback port (httptest): the real
// network stack, real time. BenchmarkStorm measures on it.
func loopbackNet(h http.Handler) (string, []transport.Option, func()) {
	srv := httptest.NewUnstartedServer(h)
	srv.Config.ReadHeaderTimeout = 10 * time.Second
	srv.Start()
	return srv.URL, nil, srv.Close
}

// memNet serves the CDN over in-memory connections (grpc's bufconn), for
// a run inside a synctest bubble: time there is simulated and advances only
// when every goroutine waits, so a loaded machine cannot stall the checkers
// or bunch their requests. TestStorm runs on it. The URL is never dialled.
func memNet(h http.Handler) (string, []transport.Option, func()) {
	l := bufconn.Listen(64 << 10)
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	served := make(chan struct{})
	go func() {
		defer close(served)
		srv.Serve(l)
	}()
	dial := func(ctx context.Context, _, _ string) (net.Conn, error) { return l.DialContext(ctx) }
	stop := func() {
		srv.Close()
		<-served
	}
	return "http://127.0.0.1:8080", []transport.Option{transport.WithDialContext(dial)}, stop
}

// storm runs the checkers against a CDN that goes down (if down) over
// network and returns its counts and the clients' summed stats. policy
// makes each checker's client's policy.
func storm(shape stormShape, down bool, policy func() transport.Policy, network stormNet) (*stormCDN, transport.Stats) {
	cdn := &stormCDN{shape: shape, down: down, buckets: make([]atomic.Int64, int(shape.run/stormBucket)+10)}
	url, opts, stop := network(cdn)
	defer stop()
	files := map[string]string{}
	for i := range 100 {
		files[fmt.Sprintf("a/%03d.js", i)] = body
	}
	a := assets(files, url)

	var mu sync.Mutex
	var total transport.Stats
	var wg sync.WaitGroup
	cdn.start = time.Now()
	ctx, cancel := context.WithDeadline(context.Background(), cdn.start.Add(shape.run))
	defer cancel()
	for i := range shape.checkers {
		wg.Go(func() {
			client := transport.New(policy(), opts...)
			defer client.CloseIdleConnections()
			// Instances do not boot in the same millisecond; each then
			// checks on its own beat, skipping a beat it is late for
			// rather than catching up (a stalled machine must not turn
			// into a burst that the test would blame on the transport).
			next := cdn.start.Add(time.Duration(rand.Int64N(int64(shape.period))))
			for n := uint64(1); ; n++ {
				select {
				case <-ctx.Done():
				case <-time.After(time.Until(next)):
				}
				if ctx.Err() != nil {
					break
				}
				Check(ctx, a, Options{Client: client, Sample: 1, Seed: uint64(i)<<32 | n, Concurrency: 1})
				next = next.Add(shape.period)
				if late := time.Since(next); late > 0 {
					next = next.Add((late/shape.period + 1) * shape.period)
				}
			}
			s := client.Stats()
			mu.Lock()
			total.Requests += s.Requests
			total.Retries += s.Retries
			total.RetriesDenied += s.RetriesDenied
			total.CircuitOpen += s.CircuitOpen
			mu.Unlock()
		})
	}
	wg.Wait()
	return cdn, total
}

// stormFigures compares an outage run with a fault-free one.
type stormFigures struct {
	steady             float64 // the fault-free run's requests per second
	calmOutage, outage int64   // requests in the outage window, fault-free and outage runs
	afterPeak          int64   // the busiest second from the recovery to the end
	recovered          time.Duration
	calmStats, stats   transport.Stats
	calm, rough        *stormCDN
}

// outageRatio is the outage run's requests in the window over the
// fault-free run's; recoveryRatio the busiest second after recovery over
// the steady rate.
func (f stormFigures) outageRatio() float64   { return float64(f.outage) / float64(f.calmOutage) }
func (f stormFigures) recoveryRatio() float64 { return float64(f.afterPeak) / f.steady }

func stormCompare(shape stormShape, calm, rough *stormCDN, calmStats, stats transport.Stats) stormFigures {
	steadyFrom, steadyTo := 2*shape.period, shape.run-shape.period
	f := stormFigures{
		steady:     float64(calm.sum(steadyFrom, steadyTo)) / (steadyTo - steadyFrom).Seconds(),
		calmOutage: calm.sum(shape.down, shape.up), outage: rough.sum(shape.down, shape.up),
		afterPeak: rough.peak(shape.up, steadyTo),
		calmStats: calmStats, stats: stats, calm: calm, rough: rough,
	}
	// recovered: from the CDN's return to the first period in which the
	// fleet sends 90% of the fault-free run's requests again (-1: not
	// within the run).
	f.recovered = -1
	for at := shape.up; at+shape.period <= shape.run; at += stormBucket {
		if rough.sum(at, at+shape.period)*10 >= calm.sum(at, at+shape.period)*9 {
			f.recovered = at - shape.up
			break
		}
	}
	return f
}

func (f stormFigures) log(logf func(string, ...any), shape stormShape) {
	logf("%d checkers, one check every %v, the CDN down (503) from %v to %v of %v", shape.checkers, shape.period, shape.down, shape.up, shape.run)
	logf("fault-free: %d requests (%d retries), steady %.0f req/s, peak %d req/s; %d requests in the outage window",
		f.calmStats.Requests, f.calmStats.Retries, f.steady, f.calm.peak(2*shape.period, shape.run-shape.period), f.calmOutage)
	logf("outage:     %d requests (%d retries, %d denied by the budget, %d refused by an open breaker); %d requests during the outage (%.2f× fault-free); peak after recovery %d req/s (%.2f× steady); back to 90%% of the fault-free rate %v after recovery",
		f.stats.Requests, f.stats.Retries, f.stats.RetriesDenied, f.stats.CircuitOpen, f.outage, f.outageRatio(), f.afterPeak, f.recoveryRatio(), f.recovered)
	var per strings.Builder
	for at := time.Duration(0); at < shape.run; at += 500 * time.Millisecond {
		fmt.Fprintf(&per, " %.1fs:%d/%d", at.Seconds(), f.calm.sum(at, at+500*time.Millisecond), f.rough.sum(at, at+500*time.Millisecond))
	}
	logf("requests per 500 ms, fault-free/outage:%s", per.String())
}

// stormRuns runs, in turn, the fault-free run, the outage run and the
// outage run with the breakers off (the client before them), and compares
// each outage run with the fault-free one: f with the breakers, g without.
func stormRuns(shape stormShape, network stormNet) (f, g stormFigures) {
	off := func() transport.Policy {
		p := transport.DefaultPolicy()
		p.BreakerFailures = -1
		return p
	}
	calm, calmStats := storm(shape, false, transport.DefaultPolicy, network)
	rough, roughStats := storm(shape, true, transport.DefaultPolicy, network)
	before, beforeStats := storm(shape, true, off, network)
	return stormCompare(shape, calm, rough, calmStats, roughStats), stormCompare(shape, calm, before, calmStats, beforeStats)
}

// TestStorm runs the storm in a synctest bubble over in-memory
// connections: simulated time, so what it asserts is the policy's shape,
// whatever else the machine is doing (on loopback, a loaded machine
// starved the test's own goroutines and bunched their requests, and the
// bars failed on a transport that had not changed). It asserts issue 16's
// goals, and that the same storm with the breakers off misses them: the
// test can tell a storming client from a calm one. BenchmarkStorm measures
// the same storm on the real network stack.
func TestStorm(t *testing.T) {
	if testing.Short() {
		t.Skip("the storm test takes a few seconds of CPU")
	}
	var f, g stormFigures
	synctest.Test(t, func(t *testing.T) { f, g = stormRuns(stormTest, memNet) })
	f.log(t.Logf, stormTest)
	t.Logf("without the breakers: %d requests during the outage (%.2f×), peak after recovery %d req/s (%.2f×)", g.outage, g.outageRatio(), g.afterPeak, g.recoveryRatio())
	if f.calmOutage == 0 || f.steady == 0 {
		t.Fatalf("the fault-free run sent nothing in the window")
	}
	if r := f.outageRatio(); r > stormOutageBar {
		t.Errorf("during the outage: %d requests, %.2f× the fault-free %d; the bar is %g×", f.outage, r, f.calmOutage, stormOutageBar)
	}
	if r := f.recoveryRatio(); r > stormRecoveryBar {
		t.Errorf("after recovery: a second of %d requests, %.2f× the steady %.0f/s; the bar is %g×", f.afterPeak, r, f.steady, stormRecoveryBar)
	}
	if f.recovered < 0 || f.recovered > 2*stormTest.period {
		t.Errorf("back to 90%% of the fault-free rate %v after recovery; the bar is %v", f.recovered, 2*stormTest.period)
	}
	if r := g.outageRatio(); r <= stormOutageBar {
		t.Errorf("with the breakers off the outage took %.2f× the fault-free requests, within the %g× bar: the storm no longer tells a storming client from a calm one", r, stormOutageBar)
	}
}

// The bars TestStorm asserts: issue 16's goals. Before the breakers the
// outage took 1.25–1.57×.
const (
	stormOutageBar   = 1.25
	stormRecoveryBar = 1.2
)

// BenchmarkStorm measures the storm (bench/storm.sh): each iteration runs
// the fault-free run, the outage run, and the outage run with the breakers
// off (the client before them), in turn, and reports their figures as
// metrics: requests in the outage window (calm-req, outage-req,
// nobreaker-req), the steady rate and the busiest second after recovery
// (steady-req/s, recovery-req/s, nobreaker-recovery-req/s), and how long
// after recovery the fleet was back to 90% of its rate (recovered-s). The
// ratios are the issue's: outage-req/calm-req ≤ 1.25, recovery-req/s /
// steady-req/s ≤ 1.2. LOCKSTEP_STORM_QUICK=1 runs a small, short storm.
func BenchmarkStorm(b *testing.B) {
	shape := stormFull
	if os.Getenv("LOCKSTEP_STORM_QUICK") == "1" {
		shape = stormQuick
	}
	var f, g stormFigures
	for b.Loop() {
		f, g = stormRuns(shape, loopbackNet)
	}
	f.log(b.Logf, shape)
	b.Logf("without the breakers: %d requests during the outage (%.2f×), peak after recovery %d req/s (%.2f×)", g.outage, g.outageRatio(), g.afterPeak, g.recoveryRatio())
	b.ReportMetric(float64(f.calmOutage), "calm-req")
	b.ReportMetric(float64(f.outage), "outage-req")
	b.ReportMetric(float64(g.outage), "nobreaker-req")
	b.ReportMetric(f.steady, "steady-req/s")
	b.ReportMetric(float64(f.afterPeak), "recovery-req/s")
	b.ReportMetric(float64(g.afterPeak), "nobreaker-recovery-req/s")
	b.ReportMetric(f.recovered.Seconds(), "recovered-s")
}
