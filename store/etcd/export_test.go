package etcd

import (
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/management-service/mgmt/store/backend"
)

// ConvertEvents converts the events of one etcd watch response as a watcher does.
func ConvertEvents(b *Backend, evs []*clientv3.Event) ([]backend.Event, error) {
	return b.events(evs)
}

// Base returns the etcd revision that is b's revision 0.
func Base(b *Backend) int64 { return b.base }
