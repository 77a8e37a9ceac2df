package gate

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/ec2/imds"
	"github.com/aws/aws-sdk-go-v2/service/autoscaling"
	elbv2 "github.com/aws/aws-sdk-go-v2/service/elasticloadbalancingv2"
	elbv2types "github.com/aws/aws-sdk-go-v2/service/elasticloadbalancingv2/types"
	"github.com/aws/smithy-go"
	"github.com/aws/smithy-go/middleware"

	"github.com/lockstep-dev/lockstep/admission"
)

// The lifecycle action results.
const (
	Continue = "CONTINUE"
	Abandon  = "ABANDON"
)

// DefaultHeartbeatInterval is how often a lifecycle heartbeat is sent
// while a check runs.
const DefaultHeartbeatInterval = 60 * time.Second

// The AWS calls the gate makes, each behind its own interface.
type (
	lifecycleCompleter interface {
		CompleteLifecycleAction(ctx context.Context, in *autoscaling.CompleteLifecycleActionInput, opts ...func(*autoscaling.Options)) (*autoscaling.CompleteLifecycleActionOutput, error)
	}
	lifecycleHeartbeater interface {
		RecordLifecycleActionHeartbeat(ctx context.Context, in *autoscaling.RecordLifecycleActionHeartbeatInput, opts ...func(*autoscaling.Options)) (*autoscaling.RecordLifecycleActionHeartbeatOutput, error)
	}
	targetRegistrar interface {
		RegisterTargets(ctx context.Context, in *elbv2.RegisterTargetsInput, opts ...func(*elbv2.Options)) (*elbv2.RegisterTargetsOutput, error)
	}
	metadataGetter interface {
		GetMetadata(ctx context.Context, in *imds.GetMetadataInput, opts ...func(*imds.Options)) (*imds.GetMetadataOutput, error)
	}
)

// Clients are the AWS API clients of one region. An *autoscaling.Client
// is both Completer and Heartbeater; an *elasticloadbalancingv2.Client a
// Registrar.
type Clients struct {
	Completer   lifecycleCompleter
	Heartbeater lifecycleHeartbeater
	Registrar   targetRegistrar
}

// Config is a boot gate: the check and what to do about its decision.
type Config struct {
	// Check is the admission check. Its Timeout (admission.DefaultTimeout
	// when zero) bounds the whole run, acting included: the check gets
	// that less the time kept for acting (a quarter, at most 10 s).
	Check admission.Config

	// LifecycleHook and AutoScalingGroup name the lifecycle hook whose
	// action is completed. Both or neither.
	LifecycleHook, AutoScalingGroup string
	// TargetGroup is an ELBv2 target group ARN the instance is registered
	// with when admitted; TargetPort (optional) the port.
	TargetGroup string
	TargetPort  int32
	// InstanceID and Region identify the instance; empty ones are read
	// from the instance metadata service (Metadata, IMDSv2).
	InstanceID, Region string
	Metadata           metadataGetter
	// Connect returns the clients for region; it is called only when
	// there is something to do.
	Connect func(ctx context.Context, region string) (Clients, error)
	// HeartbeatInterval is DefaultHeartbeatInterval when zero.
	HeartbeatInterval time.Duration
	// DryRun decides and reports without acting (and without advancing
	// the trusted state).
	DryRun bool
	// Logger receives progress; nil is silent.
	Logger *slog.Logger
}

// Run checks the instance and acts on the decision, which it returns with
// the actions taken. When admitted it registers the target (if asked)
// then completes the lifecycle action with CONTINUE; when refused, or
// when any of that fails, it completes it with ABANDON.
func Run(ctx context.Context, cfg Config) admission.Decision {
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	timeout := cfg.Check.Timeout
	if timeout <= 0 {
		timeout = admission.DefaultTimeout
	}
	// Acting must survive a cancelled parent (SIGTERM while checking is a
	// refusal, and the group must still hear ABANDON), but not the
	// deadline.
	deadline := time.Now().Add(timeout)
	actCtx, actCancel := context.WithDeadline(context.WithoutCancel(ctx), deadline)
	defer actCancel()
	ctx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()
	hook := cfg.LifecycleHook != "" || cfg.AutoScalingGroup != ""
	acting := hook || cfg.TargetGroup != ""

	check := cfg.Check
	check.Timeout = timeout
	check.DryRun = check.DryRun || cfg.DryRun
	var pre []admission.Finding
	var clients Clients
	instance := cfg.InstanceID
	if acting {
		check.Timeout = timeout - min(timeout/4, 10*time.Second)
		var err error
		if hook && (cfg.LifecycleHook == "" || cfg.AutoScalingGroup == "") {
			err = errors.New("a lifecycle hook needs both its name and its Auto Scaling group")
			pre = append(pre, admission.Finding{Kind: admission.KindDependencyUnreachable, Subject: "lifecycle hook", Message: err.Error()})
		}
		region := cfg.Region
		if err == nil {
			// Identity is cheap on EC2; a metadata service that does not
			// answer must not eat the check's time.
			idCtx, idCancel := context.WithTimeout(actCtx, min(timeout/4, 10*time.Second))
			instance, region, err = identify(idCtx, cfg)
			idCancel()
			if err != nil {
				pre = append(pre, admission.Finding{Kind: admission.KindDependencyUnreachable, Subject: "instance metadata", Message: err.Error()})
			}
		}
		if err == nil {
			if cfg.Connect == nil {
				err = errors.New("no AWS clients configured")
			} else {
				clients, err = cfg.Connect(actCtx, region)
			}
			if err != nil {
				pre = append(pre, admission.Finding{Kind: admission.KindDependencyUnreachable, Subject: "AWS", Message: fmt.Sprintf("connecting to AWS: %v", err)})
			}
		}
		if len(pre) > 0 {
			check.DryRun = true // refused anyway: do not advance the trusted state
		}
	}

	var beats atomic.Int32
	stop := func() {}
	if hook && len(pre) == 0 && !cfg.DryRun {
		stop = heartbeat(ctx, cfg, clients, instance, &beats, log)
	}
	d := admission.Check(ctx, check)
	stop()
	d.DryRun = cfg.DryRun || cfg.Check.DryRun
	for _, f := range pre {
		d.Add(f)
	}
	if !acting {
		return d
	}
	if cfg.TargetGroup != "" {
		a := admission.Action{Kind: "register-targets", Target: cfg.TargetGroup, Instance: instance}
		switch {
		case !d.Allowed:
			a.Status = admission.ActionSkipped
			a.Error = "not admitted"
		case d.DryRun:
			a.Status = admission.ActionSkipped
		default:
			if err := register(actCtx, cfg, clients, instance); err != nil {
				a.Status, a.Error = admission.ActionFailed, err.Error()
				d.Add(admission.Finding{Kind: admission.KindDependencyUnreachable, Subject: "target group " + cfg.TargetGroup, Message: err.Error()})
			} else {
				a.Status = admission.ActionDone
			}
		}
		d.Actions = append(d.Actions, a)
	}
	if hook {
		result := Abandon
		if d.Allowed {
			result = Continue
		}
		a := complete(actCtx, cfg, clients, instance, result, d.DryRun, len(pre) > 0)
		a.Heartbeats = int(beats.Load())
		d.Actions = append(d.Actions, a)
		if a.Status == admission.ActionFailed {
			d.Add(admission.Finding{Kind: admission.KindDependencyUnreachable, Subject: "lifecycle hook " + cfg.LifecycleHook,
				Message: fmt.Sprintf("completing the lifecycle action with %s: %s", result, a.Error)})
			if result == Continue {
				// Admitted, but the group did not hear it: fail closed.
				b := complete(actCtx, cfg, clients, instance, Abandon, false, false)
				d.Actions = append(d.Actions, b)
			}
		}
	}
	return d
}

// identify returns the instance ID and region, from the config or IMDS.
func identify(ctx context.Context, cfg Config) (instance, region string, err error) {
	instance, region = cfg.InstanceID, cfg.Region
	if instance != "" && region != "" {
		return instance, region, nil
	}
	if cfg.Metadata == nil {
		return "", "", errors.New("the instance ID and region are not given and no instance metadata client is configured")
	}
	get := func(path string) (string, error) {
		out, err := cfg.Metadata.GetMetadata(ctx, &imds.GetMetadataInput{Path: path})
		if err != nil {
			return "", fmt.Errorf("reading %s from the instance metadata service: %w", path, err)
		}
		defer out.Content.Close()
		b, err := io.ReadAll(io.LimitReader(out.Content, 1024))
		if err != nil {
			return "", fmt.Errorf("reading %s from the instance metadata service: %w", path, err)
		}
		v := strings.TrimSpace(string(b))
		if v == "" {
			return "", fmt.Errorf("the instance metadata service returned an empty %s", path)
		}
		return v, nil
	}
	if instance == "" {
		if instance, err = get("instance-id"); err != nil {
			return "", "", err
		}
	}
	if region == "" {
		if region, err = get("placement/region"); err != nil {
			return "", "", err
		}
	}
	return instance, region, nil
}

// heartbeat records lifecycle heartbeats until the returned stop is called.
func heartbeat(ctx context.Context, cfg Config, c Clients, instance string, n *atomic.Int32, log *slog.Logger) (stop func()) {
	every := cfg.HeartbeatInterval
	if every <= 0 {
		every = DefaultHeartbeatInterval
	}
	if c.Heartbeater == nil {
		return func() {}
	}
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Go(func() {
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			_, err := c.Heartbeater.RecordLifecycleActionHeartbeat(ctx, &autoscaling.RecordLifecycleActionHeartbeatInput{
				AutoScalingGroupName: &cfg.AutoScalingGroup, LifecycleHookName: &cfg.LifecycleHook, InstanceId: &instance,
			})
			if err != nil {
				log.Warn("lifecycle heartbeat failed", "err", err)
				if isValidation(err) {
					return // no active action: nothing to keep alive
				}
				continue
			}
			n.Add(1)
		}
	})
	return func() { cancel(); wg.Wait() }
}

func register(ctx context.Context, cfg Config, c Clients, instance string) error {
	if c.Registrar == nil {
		return errors.New("no ELBv2 client configured")
	}
	t := elbv2types.TargetDescription{Id: &instance}
	if cfg.TargetPort > 0 {
		t.Port = &cfg.TargetPort
	}
	_, err := c.Registrar.RegisterTargets(ctx, &elbv2.RegisterTargetsInput{TargetGroupArn: &cfg.TargetGroup, Targets: []elbv2types.TargetDescription{t}})
	if err != nil {
		return fmt.Errorf("registering %s with %s: %w", instance, cfg.TargetGroup, err)
	}
	return nil
}

// complete completes the lifecycle action. It is idempotent on retry: a
// ValidationError ("no active lifecycle action") answering a retry of a
// request that may have reached the group means the earlier attempt
// completed it.
func complete(ctx context.Context, cfg Config, c Clients, instance, result string, dryRun, broken bool) admission.Action {
	a := admission.Action{Kind: "complete-lifecycle-action", Target: cfg.AutoScalingGroup + "/" + cfg.LifecycleHook, Instance: instance, Result: result}
	switch {
	case dryRun:
		a.Status = admission.ActionSkipped
		return a
	case broken || c.Completer == nil:
		a.Status, a.Error = admission.ActionFailed, "no instance identity or AWS client: the hook's DefaultResult (ABANDON) applies at its heartbeat timeout"
		return a
	}
	var attempts atomic.Int32
	_, err := c.Completer.CompleteLifecycleAction(ctx, &autoscaling.CompleteLifecycleActionInput{
		AutoScalingGroupName: &cfg.AutoScalingGroup, LifecycleHookName: &cfg.LifecycleHook,
		InstanceId: &instance, LifecycleActionResult: &result,
	}, countAttempts(&attempts))
	switch {
	case err == nil:
		a.Status = admission.ActionDone
	case attempts.Load() > 1 && isValidation(err):
		a.Status = admission.ActionAlreadyDone
	default:
		a.Status, a.Error = admission.ActionFailed, err.Error()
	}
	return a
}

// isValidation reports whether err is the API's ValidationError, which
// Auto Scaling returns when no lifecycle action is active for the
// instance.
func isValidation(err error) bool {
	var ae smithy.APIError
	return errors.As(err, &ae) && ae.ErrorCode() == "ValidationError"
}

// countAttempts counts the attempts the SDK's retryer sends, by a
// middleware placed after it.
func countAttempts(n *atomic.Int32) func(*autoscaling.Options) {
	return func(o *autoscaling.Options) {
		o.APIOptions = append(o.APIOptions, func(s *middleware.Stack) error {
			return s.Finalize.Insert(middleware.FinalizeMiddlewareFunc("lockstepCountAttempts",
				func(ctx context.Context, in middleware.FinalizeInput, next middleware.FinalizeHandler) (middleware.FinalizeOutput, middleware.Metadata, error) {
					n.Add(1)
					return next.HandleFinalize(ctx, in)
				}), "Retry", middleware.After)
		})
	}
}
