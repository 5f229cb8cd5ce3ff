//go:build !kubediff

package main

import "context"

// kubeServer is absent without the kubediff tag.
type kubeServer struct{}

// startKube needs the kubediff build tag.
func startKube(context.Context, string, []map[string]any, func(string)) (*kubeServer, error) {
	return nil, errNoKube
}

// Target is never called without the tag.
func (k *kubeServer) Target() *Target { return nil }

// Stop does nothing without the tag.
func (k *kubeServer) Stop() {}
