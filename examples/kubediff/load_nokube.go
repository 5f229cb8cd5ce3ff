//go:build !kubediff

package main

import (
	"context"
	"io"
)

// runLoad needs the kubediff build tag (the reference apiserver).
func runLoad(context.Context, loadConfig, string, string, []map[string]any, io.Writer, func(string)) (int, error) {
	return 1, errNoKube
}
