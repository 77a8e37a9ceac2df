package fleet

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/aws/aws-sdk-go-v2/service/ecs"
	ecstypes "github.com/aws/aws-sdk-go-v2/service/ecs/types"

	"github.com/lockstep-dev/lockstep/manifest"
	"github.com/lockstep-dev/lockstep/verdict"
)

// ECSAPI is the ECS calls Discover makes for ecs:CLUSTER/SERVICE: ListTasks
// (paged) and DescribeTasks (100 tasks a call).
type ECSAPI interface {
	ecs.ListTasksAPIClient
	DescribeTasks(ctx context.Context, in *ecs.DescribeTasksInput, opts ...func(*ecs.Options)) (*ecs.DescribeTasksOutput, error)
}

// ecsArch maps ECS's ecs.cpu-architecture attribute to a platform's
// architecture.
var ecsArch = map[string]string{"x86_64": "amd64", "arm64": "arm64"}

// ecsService reads every running task of a service and returns one target
// per container, with the digest ECS reports (imageDigest).
func (o DiscoverOptions) ecsService(ctx context.Context, spec, arg string) ([]Target, error) {
	cluster, service, ok := strings.Cut(arg, "/")
	if !ok || cluster == "" || service == "" {
		return nil, &SpecError{Spec: spec, Reason: "want ecs:CLUSTER/SERVICE"}
	}
	if o.ECS == nil {
		return nil, &SpecError{Spec: spec, Reason: "no ECS client"}
	}
	var arns []string
	p := ecs.NewListTasksPaginator(o.ECS, &ecs.ListTasksInput{Cluster: &cluster, ServiceName: &service, DesiredStatus: ecstypes.DesiredStatusRunning})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return nil, ecsError(spec, "listing the tasks of "+arg, err)
		}
		arns = append(arns, page.TaskArns...)
	}
	var out []Target
	const batch = 100
	for i := 0; i < len(arns); i += batch {
		resp, err := o.ECS.DescribeTasks(ctx, &ecs.DescribeTasksInput{Cluster: &cluster, Tasks: arns[i:min(i+batch, len(arns))]})
		if err != nil {
			return nil, ecsError(spec, "describing the tasks of "+arg, err)
		}
		for _, task := range resp.Tasks {
			if task.LastStatus != nil && *task.LastStatus != "RUNNING" {
				continue
			}
			out = append(out, ecsTargets(spec, task)...)
		}
	}
	return out, nil
}

func ecsTargets(spec string, task ecstypes.Task) []Target {
	id := deref(task.TaskArn)
	if i := strings.LastIndex(id, "/"); i >= 0 {
		id = id[i+1:]
	}
	platform := ecsPlatform(task)
	var out []Target
	for _, c := range task.Containers {
		// A digest ECS cannot report (a container not yet pulled) stays
		// zero: the report says it could not be observed.
		d, _ := manifest.ParseDigest(deref(c.ImageDigest))
		out = append(out, Target{URL: deref(task.TaskArn), Spec: spec, Observed: &Observed{
			Name: id + "/" + deref(c.Name), Container: deref(c.Name), Image: deref(c.Image), Running: d, Platform: platform,
		}})
	}
	return out
}

// ecsPlatform is a task's os/arch as ECS reports it: the
// ecs.cpu-architecture attribute, and the platform family (Fargate's
// runtimePlatform: "Linux", "WINDOWS_SERVER_2022_CORE", ...; linux when
// ECS gives none, as on EC2 Linux container instances). "" when the
// architecture is not reported or not one of ecsArch.
func ecsPlatform(task ecstypes.Task) string {
	arch := ""
	for _, a := range task.Attributes {
		if deref(a.Name) == "ecs.cpu-architecture" {
			arch = ecsArch[deref(a.Value)]
		}
	}
	if arch == "" {
		return ""
	}
	os := "linux"
	if strings.HasPrefix(strings.ToUpper(deref(task.PlatformFamily)), "WINDOWS") {
		os = "windows"
	}
	return os + "/" + arch
}

// ecsError makes a missing cluster or service an input error and any other
// failure an unavailable ECS.
func ecsError(spec, doing string, err error) error {
	var cnf *ecstypes.ClusterNotFoundException
	var snf *ecstypes.ServiceNotFoundException
	switch {
	case errors.As(err, &cnf):
		return &SpecError{Spec: spec, Reason: "no such cluster", Err: err}
	case errors.As(err, &snf):
		return &SpecError{Spec: spec, Reason: "no such service", Err: err}
	}
	return verdict.Unavailable("ecs", fmt.Errorf("%s: %w", doing, err))
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
