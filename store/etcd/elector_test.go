package etcd_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/management-service/mgmt/store/etcd"
)

// candidates returns the values of the candidates' keys of an election, oldest
// first: the first one leads.
func candidates(t *testing.T, cli *clientv3.Client, election string) []string {
	t.Helper()
	resp, err := cli.Get(t.Context(), election+"/", clientv3.WithPrefix(),
		clientv3.WithSort(clientv3.SortByCreateRevision, clientv3.SortAscend))
	require.NoError(t, err)
	out := []string{}
	for _, kv := range resp.Kvs {
		out = append(out, string(kv.Value))
	}
	return out
}

type campaign struct {
	lost <-chan struct{}
	err  error
}

func campaignAsync(ctx context.Context, e *etcd.Elector) <-chan campaign {
	ch := make(chan campaign, 1)
	go func() {
		lost, err := e.Campaign(ctx)
		ch <- campaign{lost, err}
	}()
	return ch
}

func requireClosed(t *testing.T, ch <-chan struct{}, msg string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(30 * time.Second):
		require.FailNow(t, msg)
	}
}

// TestElector_LeadershipPassesOn ends the leadership in the ways an Elector must
// notice, and checks that the waiting candidate then leads.
func TestElector_LeadershipPassesOn(t *testing.T) {
	for _, c := range []struct {
		name string
		end  func(t *testing.T, cli *clientv3.Client, election string, cancel context.CancelFunc)
	}{
		{"ContextEnds", func(t *testing.T, cli *clientv3.Client, election string, cancel context.CancelFunc) {
			cancel()
		}},
		{"LeaseRevoked", func(t *testing.T, cli *clientv3.Client, election string, cancel context.CancelFunc) {
			resp, err := cli.Get(t.Context(), election+"/", clientv3.WithPrefix(),
				clientv3.WithSort(clientv3.SortByCreateRevision, clientv3.SortAscend))
			require.NoError(t, err)
			_, err = cli.Revoke(t.Context(), clientv3.LeaseID(resp.Kvs[0].Lease))
			require.NoError(t, err)
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			cli := rawClient(t)
			election := testPrefix() + "election"
			one, err := etcd.NewElector(rawClient(t), etcd.ElectorOptions{Election: election, TTL: 2 * time.Second, Identity: "one"})
			require.NoError(t, err)
			two, err := etcd.NewElector(rawClient(t), etcd.ElectorOptions{Election: election, TTL: 2 * time.Second, Identity: "two"})
			require.NoError(t, err)

			ctx1, cancel1 := context.WithCancel(t.Context())
			defer cancel1()
			lost1, err := one.Campaign(ctx1)
			require.NoError(t, err)
			ctx2, cancel2 := context.WithCancel(t.Context())
			defer cancel2()
			second := campaignAsync(ctx2, two)
			require.Eventually(t, func() bool { return len(candidates(t, cli, election)) == 2 }, 30*time.Second, 5*time.Millisecond)
			assert.Equal(t, []string{"one", "two"}, candidates(t, cli, election), "one leads, two waits")
			select {
			case r := <-second:
				require.FailNow(t, "two won while one leads", "%v", r.err)
			case <-lost1:
				require.FailNow(t, "one lost the leadership on its own")
			default:
			}

			c.end(t, cli, election, cancel1)
			requireClosed(t, lost1, "one's leadership did not end")
			var r campaign
			select {
			case r = <-second:
			case <-time.After(30 * time.Second):
				require.FailNow(t, "two did not take over")
			}
			require.NoError(t, r.err)
			assert.Equal(t, []string{"two"}, candidates(t, cli, election), "one's key is gone")
			select {
			case <-r.lost:
				require.FailNow(t, "two lost the leadership on its own")
			default:
			}
			cancel2()
			requireClosed(t, r.lost, "two's leadership did not end with its context")
			require.Eventually(t, func() bool { return len(candidates(t, cli, election)) == 0 }, 30*time.Second, 5*time.Millisecond,
				"two resigns when its context ends")
		})
	}
}

func TestElector_CampaignEndsWithItsContext(t *testing.T) {
	cli := rawClient(t)
	election := testPrefix() + "election"
	one, err := etcd.NewElector(cli, etcd.ElectorOptions{Election: election, TTL: 2 * time.Second, Identity: "one"})
	require.NoError(t, err)
	two, err := etcd.NewElector(cli, etcd.ElectorOptions{Election: election, TTL: 2 * time.Second, Identity: "two"})
	require.NoError(t, err)
	lost, err := one.Campaign(t.Context())
	require.NoError(t, err)

	ctx, cancel := context.WithCancel(t.Context())
	second := campaignAsync(ctx, two)
	require.Eventually(t, func() bool { return len(candidates(t, cli, election)) == 2 }, 30*time.Second, 5*time.Millisecond)
	cancel()
	r := <-second
	require.ErrorIs(t, r.err, context.Canceled)
	assert.Nil(t, r.lost)
	require.Eventually(t, func() bool { return len(candidates(t, cli, election)) == 1 }, 30*time.Second, 5*time.Millisecond,
		"a campaign that gives up takes its key away")
	assert.Equal(t, []string{"one"}, candidates(t, cli, election))
	select {
	case <-lost:
		require.FailNow(t, "the leader lost the leadership")
	default:
	}

	done, stop := context.WithCancel(t.Context())
	stop()
	_, err = two.Campaign(done)
	require.ErrorIs(t, err, context.Canceled, "a campaign with a done context does not start")
}

func TestNewElector_NeedsAClient(t *testing.T) {
	e, err := etcd.NewElector(nil, etcd.ElectorOptions{})
	require.Error(t, err)
	assert.Nil(t, e)
}
