package setup

import (
	"context"
	"fmt"
)

func (a *App) buildStream(_ context.Context, name string) error {
	return fmt.Errorf("unknown function %q", name)
}
