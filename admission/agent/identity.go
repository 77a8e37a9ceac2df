package agent

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/aws/aws-sdk-go-v2/feature/ec2/imds"
	"github.com/aws/aws-sdk-go-v2/service/autoscaling"
)

// MetadataClient is the part of the IMDS client Identify uses
// (*imds.Client).
type MetadataClient interface {
	GetMetadata(ctx context.Context, in *imds.GetMetadataInput, opts ...func(*imds.Options)) (*imds.GetMetadataOutput, error)
}

// InstanceDescriber is the part of the Auto Scaling client Identify uses to
// find an instance's group when IMDS does not expose instance tags.
type InstanceDescriber interface {
	DescribeAutoScalingInstances(ctx context.Context, in *autoscaling.DescribeAutoScalingInstancesInput, opts ...func(*autoscaling.Options)) (*autoscaling.DescribeAutoScalingInstancesOutput, error)
}

// IdentifyOptions says where Identify looks. Every field is optional.
type IdentifyOptions struct {
	// IMDS, if set, is asked for the instance ID, zone, private IP and the
	// aws:autoscaling:groupName tag (IMDS exposes tags only when instance
	// metadata tags are enabled).
	IMDS MetadataClient
	// AutoScaling, if set, is asked for the group when IMDS has no tag.
	AutoScaling InstanceDescriber
	// Hostname overrides os.Hostname.
	Hostname string
}

// Identify finds the instance's identity. It never fails: what cannot be
// found is left empty (the hostname is always set), and the errors met on
// the way are returned beside it, for the log.
func Identify(ctx context.Context, o IdentifyOptions) (Identity, []error) {
	id := Identity{Hostname: o.Hostname, Source: "hostname"}
	var errs []error
	if id.Hostname == "" {
		h, err := os.Hostname()
		if err != nil {
			errs = append(errs, fmt.Errorf("reading the hostname: %w", err))
		}
		id.Hostname = h
	}
	if o.IMDS == nil {
		return id, errs
	}
	iid, err := metadata(ctx, o.IMDS, "instance-id")
	if err != nil {
		return id, append(errs, fmt.Errorf("reading the instance ID from IMDS: %w", err))
	}
	id.InstanceID, id.Source = iid, "imds"
	id.AvailabilityZone, _ = metadata(ctx, o.IMDS, "placement/availability-zone")
	id.PrivateIP, _ = metadata(ctx, o.IMDS, "local-ipv4")
	if asg, err := metadata(ctx, o.IMDS, "tags/instance/aws:autoscaling:groupName"); err == nil {
		id.ASG = asg
		return id, errs
	}
	if o.AutoScaling != nil {
		out, err := o.AutoScaling.DescribeAutoScalingInstances(ctx, &autoscaling.DescribeAutoScalingInstancesInput{InstanceIds: []string{iid}})
		switch {
		case err != nil:
			errs = append(errs, fmt.Errorf("describing instance %s in Auto Scaling: %w", iid, err))
		case len(out.AutoScalingInstances) > 0 && out.AutoScalingInstances[0].AutoScalingGroupName != nil:
			id.ASG = *out.AutoScalingInstances[0].AutoScalingGroupName
		}
	}
	return id, errs
}

func metadata(ctx context.Context, c MetadataClient, path string) (string, error) {
	out, err := c.GetMetadata(ctx, &imds.GetMetadataInput{Path: path})
	if err != nil {
		return "", err
	}
	defer out.Content.Close()
	b, err := io.ReadAll(io.LimitReader(out.Content, 4096))
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(b)), nil
}
