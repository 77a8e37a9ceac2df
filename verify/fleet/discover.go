package fleet

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"strconv"
	"strings"

	"github.com/aws/aws-sdk-go-v2/service/autoscaling"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	elbv2 "github.com/aws/aws-sdk-go-v2/service/elasticloadbalancingv2"
	elbv2types "github.com/aws/aws-sdk-go-v2/service/elasticloadbalancingv2/types"

	"github.com/lockstep-dev/lockstep/verdict"
)

// DefaultAgentPort is the port of a discovered instance's agent.
const DefaultAgentPort = 9464

// StatusPath is the agent's status endpoint.
const StatusPath = "/v1/status"

// Target is one instance to ask for its status.
type Target struct {
	// URL is the agent's status URL; "" when the instance has no address
	// (it is then reported unreachable).
	URL string `json:"url"`
	// InstanceID is the EC2 instance ID, when discovery knows it.
	InstanceID string `json:"instanceId,omitempty"`
	// Spec is the --targets value that found the instance.
	Spec string `json:"spec"`
	// Observed is what an orchestrator (ecs:, k8s:) reports running in one
	// container; such a target is not asked for a status.
	Observed *Observed `json:"observed,omitempty"`
}

// AutoScalingAPI is the Auto Scaling call Discover makes for asg:NAME.
type AutoScalingAPI interface {
	DescribeAutoScalingGroups(ctx context.Context, in *autoscaling.DescribeAutoScalingGroupsInput, opts ...func(*autoscaling.Options)) (*autoscaling.DescribeAutoScalingGroupsOutput, error)
}

// EC2API is the EC2 call Discover makes for instances' private addresses
// and for ec2-tag:KEY=VALUE.
type EC2API interface {
	DescribeInstances(ctx context.Context, in *ec2.DescribeInstancesInput, opts ...func(*ec2.Options)) (*ec2.DescribeInstancesOutput, error)
}

// ELBv2API is the ELBv2 call Discover makes for tg:ARN.
type ELBv2API interface {
	DescribeTargetHealth(ctx context.Context, in *elbv2.DescribeTargetHealthInput, opts ...func(*elbv2.Options)) (*elbv2.DescribeTargetHealthOutput, error)
}

// DiscoverOptions configures Discover. The AWS clients are needed only by
// the specs that use them.
type DiscoverOptions struct {
	AutoScaling AutoScalingAPI
	EC2         EC2API
	ELBv2       ELBv2API
	ECS         ECSAPI
	// Kubernetes lists pods for k8s:NAMESPACE[/SELECTOR].
	Kubernetes PodLister
	// AgentPort is the agent's port on discovered instances (asg:, tg:,
	// ec2-tag:, and file: lines without a port); default DefaultAgentPort.
	AgentPort int
	// Scheme is "http" (default) or "https", for discovered instances.
	Scheme string
}

// SpecError is a --targets value that is malformed or names nothing that
// exists (an input error, exit 2).
type SpecError struct {
	Spec   string
	Reason string
	Err    error
}

func (e *SpecError) Error() string { return fmt.Sprintf("target %q: %s", e.Spec, e.Reason) }

func (e *SpecError) Unwrap() error { return e.Err }

// Needs reports which clients the specs need, so that a caller builds only
// those.
func Needs(specs []string) (n Clients) {
	n.AutoScaling, n.EC2, n.ELBv2 = NeedsAWS(specs)
	for _, s := range specs {
		switch kind, _, _ := strings.Cut(s, ":"); kind {
		case "ecs":
			n.ECS = true
		case "k8s":
			n.Kubernetes = true
		}
	}
	return n
}

// Clients names the clients DiscoverOptions may hold.
type Clients struct {
	AutoScaling, EC2, ELBv2, ECS, Kubernetes bool
}

// AWS reports whether any AWS client is needed.
func (n Clients) AWS() bool { return n.AutoScaling || n.EC2 || n.ELBv2 || n.ECS }

// NeedsAWS reports which AWS clients of agent discovery the specs need, so
// that a caller builds only those.
func NeedsAWS(specs []string) (autoScaling, ec2, elbv2 bool) {
	for _, s := range specs {
		kind, _, _ := strings.Cut(s, ":")
		switch kind {
		case "asg":
			autoScaling, ec2 = true, true
		case "tg":
			elbv2, ec2 = true, true
		case "ec2-tag":
			ec2 = true
		}
	}
	return autoScaling, ec2, elbv2
}

// Discover expands specs into targets, in order, each URL once:
//
//   - asg:NAME: the group's instances (but those terminating or detaching),
//     at their private IPv4 addresses from EC2;
//   - tg:ARN: the target group's registered targets (instance targets at
//     their private addresses, IP targets as they are);
//   - ec2-tag:KEY=VALUE: pending and running instances with that tag;
//   - file:PATH: one status URL, host:port or host a line; blank lines and
//     lines starting with # are skipped;
//   - http://… or https://…: a status URL (a URL without a path gets
//     /v1/status);
//   - ecs:CLUSTER/SERVICE: every container of the service's running tasks,
//     as ECS reports them (no agent is asked);
//   - k8s:NAMESPACE[/SELECTOR]: every container of the namespace's pods
//     (matching the label selector), as the Kubernetes API reports them
//     (no agent is asked).
//
// Targets from ecs: and k8s: carry Observed and are deduplicated by
// container (its task or pod and its name), so that overlapping specs
// count each container once; other targets by status URL.
// A malformed spec, an unknown group or target group, or an unreadable file
// is a *SpecError; an AWS call that fails is a *verdict.UnavailableError.
func Discover(ctx context.Context, specs []string, o DiscoverOptions) ([]Target, error) {
	if o.AgentPort == 0 {
		o.AgentPort = DefaultAgentPort
	}
	if o.Scheme == "" {
		o.Scheme = "http"
	}
	var out []Target
	seen := map[string]int{}
	observed := map[string]bool{}
	add := func(ts []Target) {
		for _, t := range ts {
			if t.Observed != nil {
				// One container, however many specs name it (k8s:store
				// and k8s:store/app=web): its task or pod and its name.
				k := t.URL + "\x00" + t.Observed.Name
				if !observed[k] {
					observed[k] = true
					out = append(out, t)
				}
				continue
			}
			if i, dup := seen[t.URL]; dup && t.URL != "" {
				if out[i].InstanceID == "" {
					out[i].InstanceID = t.InstanceID
				}
				continue
			}
			seen[t.URL] = len(out)
			out = append(out, t)
		}
	}
	for _, spec := range specs {
		ts, err := o.discover(ctx, spec)
		if err != nil {
			return nil, err
		}
		add(ts)
	}
	return out, nil
}

func (o DiscoverOptions) discover(ctx context.Context, spec string) ([]Target, error) {
	if strings.HasPrefix(spec, "http://") || strings.HasPrefix(spec, "https://") {
		u, err := statusURL(spec)
		if err != nil {
			return nil, &SpecError{Spec: spec, Reason: err.Error(), Err: err}
		}
		return []Target{{URL: u, Spec: spec}}, nil
	}
	kind, arg, ok := strings.Cut(spec, ":")
	if !ok || arg == "" {
		return nil, &SpecError{Spec: spec, Reason: "want asg:NAME, tg:ARN, ec2-tag:KEY=VALUE, file:PATH, ecs:CLUSTER/SERVICE, k8s:NAMESPACE[/SELECTOR] or a status URL"}
	}
	switch kind {
	case "asg":
		return o.group(ctx, spec, arg)
	case "tg":
		return o.targetGroup(ctx, spec, arg)
	case "ec2-tag":
		key, value, ok := strings.Cut(arg, "=")
		if !ok || key == "" {
			return nil, &SpecError{Spec: spec, Reason: "want ec2-tag:KEY=VALUE"}
		}
		return o.tagged(ctx, spec, key, value)
	case "file":
		return o.file(spec, arg)
	case "ecs":
		return o.ecsService(ctx, spec, arg)
	case "k8s":
		return o.pods(ctx, spec, arg)
	}
	return nil, &SpecError{Spec: spec, Reason: "unknown kind " + strconv.Quote(kind) + "; want asg, tg, ec2-tag, file, ecs, k8s or a status URL"}
}

// statusURL checks a status URL and gives it the status path if it has
// none.
func statusURL(s string) (string, error) {
	u, err := url.Parse(s)
	if err != nil {
		return "", err
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", fmt.Errorf("want an http or https URL with a host")
	}
	if u.Path == "" || u.Path == "/" {
		u.Path = StatusPath
	}
	return u.String(), nil
}

func (o DiscoverOptions) hostURL(host string) string {
	return o.Scheme + "://" + net.JoinHostPort(host, strconv.Itoa(o.AgentPort)) + StatusPath
}

// terminating lists the Auto Scaling lifecycle states of instances that are
// leaving the group: they are not checked.
func leaving(state string) bool {
	return strings.HasPrefix(state, "Terminat") || strings.HasPrefix(state, "Detach")
}

func (o DiscoverOptions) group(ctx context.Context, spec, name string) ([]Target, error) {
	if o.AutoScaling == nil {
		return nil, &SpecError{Spec: spec, Reason: "no Auto Scaling client"}
	}
	var ids []string
	found := false
	p := autoscaling.NewDescribeAutoScalingGroupsPaginator(o.AutoScaling, &autoscaling.DescribeAutoScalingGroupsInput{AutoScalingGroupNames: []string{name}})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return nil, verdict.Unavailable("autoscaling", fmt.Errorf("describing group %s: %w", name, err))
		}
		for _, g := range page.AutoScalingGroups {
			if g.AutoScalingGroupName == nil || *g.AutoScalingGroupName != name {
				continue
			}
			found = true
			for _, in := range g.Instances {
				if in.InstanceId != nil && !leaving(string(in.LifecycleState)) {
					ids = append(ids, *in.InstanceId)
				}
			}
		}
	}
	if !found {
		return nil, &SpecError{Spec: spec, Reason: "no such Auto Scaling group"}
	}
	return o.instances(ctx, spec, ids)
}

// instances resolves instance IDs to targets at their private addresses,
// in the order given.
func (o DiscoverOptions) instances(ctx context.Context, spec string, ids []string) ([]Target, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	if o.EC2 == nil {
		return nil, &SpecError{Spec: spec, Reason: "no EC2 client"}
	}
	addr := make(map[string]string, len(ids))
	const batch = 100
	for i := 0; i < len(ids); i += batch {
		chunk := ids[i:min(i+batch, len(ids))]
		err := describe(ctx, o.EC2, &ec2.DescribeInstancesInput{InstanceIds: chunk}, func(in ec2types.Instance) {
			if in.InstanceId != nil && in.PrivateIpAddress != nil && *in.PrivateIpAddress != "" {
				addr[*in.InstanceId] = *in.PrivateIpAddress
			}
		})
		if err != nil {
			return nil, err
		}
	}
	out := make([]Target, 0, len(ids))
	for _, id := range ids {
		t := Target{InstanceID: id, Spec: spec}
		if a, ok := addr[id]; ok {
			t.URL = o.hostURL(a)
		}
		out = append(out, t)
	}
	return out, nil
}

func describe(ctx context.Context, c EC2API, in *ec2.DescribeInstancesInput, each func(ec2types.Instance)) error {
	p := ec2.NewDescribeInstancesPaginator(c, in)
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return verdict.Unavailable("ec2", fmt.Errorf("describing instances: %w", err))
		}
		for _, r := range page.Reservations {
			for _, inst := range r.Instances {
				each(inst)
			}
		}
	}
	return nil
}

func (o DiscoverOptions) tagged(ctx context.Context, spec, key, value string) ([]Target, error) {
	if o.EC2 == nil {
		return nil, &SpecError{Spec: spec, Reason: "no EC2 client"}
	}
	in := &ec2.DescribeInstancesInput{Filters: []ec2types.Filter{
		{Name: ptr("tag:" + key), Values: []string{value}},
		{Name: ptr("instance-state-name"), Values: []string{"pending", "running"}},
	}}
	var out []Target
	err := describe(ctx, o.EC2, in, func(inst ec2types.Instance) {
		if inst.InstanceId == nil {
			return
		}
		t := Target{InstanceID: *inst.InstanceId, Spec: spec}
		if inst.PrivateIpAddress != nil && *inst.PrivateIpAddress != "" {
			t.URL = o.hostURL(*inst.PrivateIpAddress)
		}
		out = append(out, t)
	})
	return out, err
}

func (o DiscoverOptions) targetGroup(ctx context.Context, spec, arn string) ([]Target, error) {
	if o.ELBv2 == nil {
		return nil, &SpecError{Spec: spec, Reason: "no ELBv2 client"}
	}
	resp, err := o.ELBv2.DescribeTargetHealth(ctx, &elbv2.DescribeTargetHealthInput{TargetGroupArn: &arn})
	if err != nil {
		var nf *elbv2types.TargetGroupNotFoundException
		if errors.As(err, &nf) {
			return nil, &SpecError{Spec: spec, Reason: "no such target group", Err: err}
		}
		return nil, verdict.Unavailable("elbv2", fmt.Errorf("describing target group %s: %w", arn, err))
	}
	var out []Target
	var ids []string
	for _, d := range resp.TargetHealthDescriptions {
		if d.Target == nil || d.Target.Id == nil {
			continue
		}
		id := *d.Target.Id
		switch {
		case strings.HasPrefix(id, "i-"):
			ids = append(ids, id)
		case net.ParseIP(id) != nil:
			out = append(out, Target{URL: o.hostURL(id), Spec: spec})
		default:
			return nil, &SpecError{Spec: spec, Reason: "target " + id + " is neither an instance nor an IP address"}
		}
	}
	inst, err := o.instances(ctx, spec, ids)
	if err != nil {
		return nil, err
	}
	return append(inst, out...), nil
}

func (o DiscoverOptions) file(spec, path string) ([]Target, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, &SpecError{Spec: spec, Reason: err.Error(), Err: err}
	}
	var out []Target
	sc := bufio.NewScanner(bytes.NewReader(b))
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		u, err := o.lineURL(line)
		if err != nil {
			return nil, &SpecError{Spec: spec, Reason: fmt.Sprintf("line %d: %v", n, err), Err: err}
		}
		out = append(out, Target{URL: u, Spec: spec})
	}
	if err := sc.Err(); err != nil {
		return nil, &SpecError{Spec: spec, Reason: err.Error(), Err: err}
	}
	return out, nil
}

func (o DiscoverOptions) lineURL(line string) (string, error) {
	if strings.Contains(line, "://") {
		return statusURL(line)
	}
	if host, port, err := net.SplitHostPort(line); err == nil {
		if _, err := strconv.ParseUint(port, 10, 16); err != nil || host == "" {
			return "", fmt.Errorf("%q: want host:port", line)
		}
		return o.Scheme + "://" + line + StatusPath, nil
	}
	if strings.ContainsAny(line, " \t/") {
		return "", fmt.Errorf("%q: want a status URL, host:port or host", line)
	}
	return o.hostURL(strings.Trim(line, "[]")), nil
}

func ptr[T any](v T) *T { return &v }
