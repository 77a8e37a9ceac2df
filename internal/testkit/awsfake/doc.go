// Package awsfake is the protocol fake of the AWS APIs lockstep calls, for
// tests: Auto Scaling (DescribeAutoScalingGroups,
// DescribeAutoScalingInstances, CompleteLifecycleAction,
// RecordLifecycleActionHeartbeat) and ELBv2 (DescribeTargetHealth,
// RegisterTargets) in the AWS query protocol, EC2 (DescribeInstances) in
// the EC2 query protocol, and the instance metadata service IMDSv2 (a
// token PUT, then GETs carrying the token). Tests point the real SDK
// clients at it with BaseEndpoint and static credentials.
//
// An [AWS] or an [IMDS] is an http.Handler to serve as the test likes;
// [NewAWS] and [NewIMDS] start one on loopback for the life of a test.
package awsfake
