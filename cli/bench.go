package cli

import "context"

func runBench(ctx context.Context, e *env, args []string) error {
	return usageErr("bench is not built yet")
}
