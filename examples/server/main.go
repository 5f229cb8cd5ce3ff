// Command server is the management API (management.service/v1) over HTTP: a custom
// server built from the library's packages, which a stock kubectl and client-go's
// dynamic client talk to.
//
//	go run ./examples/server --seed examples/server/seed.yaml
//
// starts it on https://127.0.0.1:8080/kubernetes/management with an in-memory store and
// a self-signed certificate, prints an admin access key and writes a kubeconfig, so that
//
//	kubectl --kubeconfig ./management.kubeconfig get projects
//
// works at once. Run it with -h for the flags; the README shows a session. It needs
// nothing beyond the library's own modules; the same server on etcd is the command in
// the nested module examples/server/etcd.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/management-service/mgmt/examples/server/internal/app"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := app.Main(ctx, os.Args[1:], os.Stdout, os.Stderr); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return
		}
		fmt.Fprintln(os.Stderr, "server:", err)
		os.Exit(1)
	}
}
