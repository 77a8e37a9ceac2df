// Command awsclients links the three AWS service clients whose models use
// the SDK's schema-based (de)serialization (Auto Scaling, ECS, ELBv2: the
// lifecycle hook, the target group and the agentless fleet check) and
// exits: their share of the start (bench/start.sh FLOORS=1).
package main

import (
	"os"

	_ "github.com/aws/aws-sdk-go-v2/service/autoscaling"
	_ "github.com/aws/aws-sdk-go-v2/service/ecs"
	_ "github.com/aws/aws-sdk-go-v2/service/elasticloadbalancingv2"
)

func main() { os.Exit(0) }
