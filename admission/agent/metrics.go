package agent

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/lockstep-dev/lockstep/admission"
)

// The metric names, documented in docs/fleet.md.
const (
	MetricChecks             = "lockstep_agent_checks_total"
	MetricAdmitted           = "lockstep_agent_admitted"
	MetricMismatch           = "lockstep_agent_mismatch"
	MetricFindings           = "lockstep_agent_findings"
	MetricGeneration         = "lockstep_agent_manifest_generation"
	MetricTLSExpiry          = "lockstep_agent_tls_expiry_seconds"
	MetricCheckDuration      = "lockstep_agent_check_duration_seconds"
	MetricLastCheckTimestamp = "lockstep_agent_last_check_timestamp_seconds"
)

type metrics struct {
	reg        *prometheus.Registry
	checks     *prometheus.CounterVec
	admitted   prometheus.Gauge
	mismatch   prometheus.Gauge
	findings   *prometheus.GaugeVec
	generation prometheus.Gauge
	tlsExpiry  *prometheus.GaugeVec
	duration   prometheus.Histogram
	lastCheck  prometheus.Gauge
}

func newMetrics() *metrics {
	m := &metrics{
		reg: prometheus.NewRegistry(),
		checks: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: MetricChecks, Help: "Admission checks run, by result (admitted, refused, unverified).",
		}, []string{"result"}),
		admitted: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: MetricAdmitted, Help: "1 while the last check admitted the instance, else 0.",
		}),
		mismatch: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: MetricMismatch, Help: "1 when the last check found a mismatch (refused, not unverified), else 0.",
		}),
		findings: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: MetricFindings, Help: "Findings of the last check, by kind and severity.",
		}, []string{"kind", "severity"}),
		generation: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: MetricGeneration, Help: "Generation of the manifest the last check compared against (0 if none).",
		}),
		tlsExpiry: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: MetricTLSExpiry, Help: "Seconds until the TLS certificate of an endpoint the last check touched expires (negative once expired).",
		}, []string{"endpoint"}),
		duration: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: MetricCheckDuration, Help: "Duration of admission checks.",
			Buckets: []float64{0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120},
		}),
		lastCheck: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: MetricLastCheckTimestamp, Help: "Unix time the last check finished.",
		}),
	}
	for _, r := range []string{StateAdmitted, StateRefused, StateUnverified} {
		m.checks.WithLabelValues(r)
	}
	m.reg.MustRegister(m.checks, m.admitted, m.mismatch, m.findings, m.generation, m.tlsExpiry, m.duration, m.lastCheck,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

func (m *metrics) observe(r Result, s *Status, elapsed time.Duration, now time.Time) {
	m.checks.WithLabelValues(s.State).Inc()
	m.admitted.Set(boolGauge(s.State == StateAdmitted))
	m.mismatch.Set(boolGauge(s.State == StateRefused))
	m.findings.Reset()
	for _, f := range r.Decision.Findings {
		m.findings.WithLabelValues(string(f.Kind), string(severity(f))).Inc()
	}
	gen := 0.0
	if s.Manifest != nil {
		gen = float64(s.Manifest.Generation)
	}
	m.generation.Set(gen)
	m.tlsExpiry.Reset()
	for _, c := range r.Certificates {
		m.tlsExpiry.WithLabelValues(c.Host).Set(c.NotAfter.Sub(now).Seconds())
	}
	m.duration.Observe(elapsed.Seconds())
	m.lastCheck.Set(float64(now.Unix()))
}

func severity(f admission.Finding) admission.Severity {
	if f.Severity == "" {
		return admission.Refuse
	}
	return f.Severity
}

func boolGauge(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
