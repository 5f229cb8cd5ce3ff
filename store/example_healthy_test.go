package store_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/management-service/mgmt/resource"
	"github.com/management-service/mgmt/store"
	"github.com/management-service/mgmt/store/backend"
	"github.com/management-service/mgmt/store/memdb"
)

// ExampleStore_Healthy checks a store as a readiness probe would: healthy while its
// background work follows the backend, a 503 wrapping the cause once the backend is
// closed under it.
func ExampleStore_Healthy() {
	ctx := context.Background()
	b := memdb.New(memdb.Options{})
	s, err := store.New(b, store.Options{})
	if err != nil {
		panic(err)
	}
	defer s.Close()
	fmt.Println("healthy:", s.Healthy(ctx) == nil)
	_ = b.Close()
	err = s.Healthy(ctx)
	fmt.Println("healthy after the backend closed:", err == nil)
	fmt.Println("status:", resource.ReasonOf(err))
	fmt.Println("because the backend is closed:", errors.Is(err, backend.ErrClosed))
	// Output:
	// healthy: true
	// healthy after the backend closed: false
	// status: ServiceUnavailable
	// because the backend is closed: true
}
