package storetest_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/management-service/mgmt/resource"
	"github.com/management-service/mgmt/store"
	"github.com/management-service/mgmt/store/storetest"
)

// A unit test of a controller's deletion logic: the fixture is the real store, so the
// grace period, the reaper and resourceVersions behave as in production.
func ExampleNewFixture() {
	t := &testing.T{} // in a real test, the *testing.T of the test function
	f := storetest.NewFixture(t, nil, &resource.Project{ObjectMeta: resource.ObjectMeta{Name: "web"}})
	ctx := context.Background()

	grace := int64(30)
	_, _ = f.Delete(ctx, &resource.Project{ObjectMeta: resource.ObjectMeta{Name: "web"}},
		store.DeleteOptions{GracePeriodSeconds: &grace})
	f.Step(31 * time.Second)

	err := f.Get(ctx, "", "web", &resource.Project{}, store.GetOptions{})
	fmt.Println(resource.ReasonOf(err))
	// Output: NotFound
}
