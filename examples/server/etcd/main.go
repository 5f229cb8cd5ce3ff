// Command etcd is the example server with its objects in etcd: the same server as
// examples/server, plus --etcd-endpoints and --etcd-prefix. It is a module of its own
// so that the in-memory server builds without etcd's modules.
//
//	cd examples/server/etcd
//	go run . --etcd-endpoints http://127.0.0.1:2379 --addr 127.0.0.1:8080
//
// Servers on the same endpoints and prefix serve one store; an etcd election picks
// the one that runs the reaper and the garbage collector.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/management-service/mgmt/examples/server/internal/app"
	"github.com/management-service/mgmt/store"
	"github.com/management-service/mgmt/store/backend"
	"github.com/management-service/mgmt/store/etcd"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := app.Main(ctx, os.Args[1:], os.Stdout, os.Stderr, Storage()); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return
		}
		fmt.Fprintln(os.Stderr, "server:", err)
		os.Exit(1)
	}
}

// Storage is the etcd storage of the example server: its flags and its backend.
func Storage() *app.Storage {
	var endpoints, prefix string
	list := func() []string {
		var out []string
		for _, e := range strings.Split(endpoints, ",") {
			if e = strings.TrimSpace(e); e != "" {
				out = append(out, e)
			}
		}
		return out
	}
	return &app.Storage{
		Flags: func(fs *flag.FlagSet) {
			fs.StringVar(&endpoints, "etcd-endpoints", "", "comma-separated etcd client URLs to keep the objects in (several servers may share them)")
			fs.StringVar(&prefix, "etcd-prefix", etcd.DefaultPrefix, "key prefix of the objects in etcd (with --etcd-endpoints)")
		},
		Check: func(set map[string]bool, o app.Options) error {
			switch {
			case set["etcd-endpoints"] && len(list()) == 0:
				return fmt.Errorf("--etcd-endpoints %q names no endpoint", endpoints)
			case set["etcd-prefix"] && len(list()) == 0:
				return errors.New("--etcd-prefix goes with --etcd-endpoints")
			case len(list()) > 0 && o.DataDir != "":
				return errors.New("--data-dir and --etcd-endpoints exclude each other: the objects live in one place")
			}
			return nil
		},
		Open: func(ctx context.Context, _ app.Options) (backend.Backend, store.Elector, error) {
			eps := list()
			if len(eps) == 0 {
				return nil, nil, nil
			}
			b, err := etcd.New(ctx, etcd.Options{Endpoints: eps, Prefix: prefix})
			if err != nil {
				return nil, nil, fmt.Errorf("opening etcd at %s: %w", strings.Join(eps, ","), err)
			}
			// Servers that share the prefix share the store: one of them reaps and collects.
			e, err := etcd.NewElector(b.Client(), etcd.ElectorOptions{Election: strings.TrimSuffix(b.Prefix(), "/") + "-election"})
			if err != nil {
				_ = b.Close()
				return nil, nil, err
			}
			return b, e, nil
		},
	}
}
