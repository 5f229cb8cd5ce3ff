package httpapi

import (
	"context"
	"io"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/management-service/mgmt/resource"
	"github.com/management-service/mgmt/store"
)

// Fair admission: the in-flight bounds are shared fairly between callers.
//
// Each bound (read-only requests, mutating requests, watches) is a number of seats.
// A request takes a seat after its caller is authenticated, so an unauthenticated
// flood holds none, and it is counted against its caller (its flow: the user's name,
// or the client's address for an anonymous caller). One flow holds at most its
// per-user share of the seats: a request over it is 429 at once, so one key's flood
// of slow or heavy requests is refused without making anybody else's wait. When
// every seat is taken, a request waits in its flow's queue (at most queueLength
// requests, at most queueWait), and each seat that frees goes to the next flow in
// turn that has a request waiting and is below its share: flows are served round
// robin, as kube-apiserver's API Priority and Fairness does within one priority
// level, without its configuration objects. A request that cannot get a seat is 429
// with Retry-After, which clients retry.
//
// A request body must arrive at a least rate (see bodyReadTimeout): a client that
// trickles its body holds its seat for a time that grows with the size it declared,
// not for the whole request timeout.

// Fair admission parameters.
const (
	// queueLength is the most requests of one flow waiting for a seat.
	queueLength = 16
	// queueWait is the longest a request waits for a seat.
	queueWait = 5 * time.Second
	// bodyReadBase is the time every request has to send its body, on top of what
	// its size allows at bodyReadRate.
	bodyReadBase = 10 * time.Second
	// bodyReadRate is the least rate, in bytes a second, at which a request body must
	// arrive.
	bodyReadRate = 16 << 10
)

// fairLimiter is one in-flight bound: seats shared round robin between flows.
type fairLimiter struct {
	mu      sync.Mutex
	seats   int // the bound
	perFlow int // the most seats one flow holds
	queue   int // the most requests of one flow waiting (0: none wait)
	inUse   int
	flows   map[string]*flow
	turn    []*flow // flows with requests waiting, in the order they are served
}

// flow is one caller's requests in a fairLimiter.
type flow struct {
	key     string
	inUse   int
	waiting []chan struct{} // closed when the request got a seat
	queued  bool            // in turn
}

func newFairLimiter(seats, perFlow, queue int) *fairLimiter {
	perFlow = min(max(perFlow, 1), seats)
	return &fairLimiter{seats: seats, perFlow: perFlow, queue: queue, flows: map[string]*flow{}}
}

// inFlight returns the seats taken.
func (l *fairLimiter) inFlight() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.inUse
}

// acquire takes a seat for flow key, waiting in its queue while every seat is taken;
// it returns the function that gives the seat back, or 429.
func (l *fairLimiter) acquire(ctx context.Context, key string) (func(), error) {
	l.mu.Lock()
	f := l.flows[key]
	if f == nil {
		f = &flow{key: key}
		l.flows[key] = f
	}
	if f.inUse >= l.perFlow {
		l.forgetIdle(f)
		l.mu.Unlock()
		return nil, resource.NewTooManyRequests("too many requests of this user in flight, please try again later", 1)
	}
	if l.inUse < l.seats && len(l.turn) == 0 {
		l.take(f)
		l.mu.Unlock()
		return func() { l.release(f) }, nil
	}
	if len(f.waiting) >= l.queue {
		l.forgetIdle(f)
		l.mu.Unlock()
		return nil, resource.NewTooManyRequests("too many requests, please try again later", 1)
	}
	ready := make(chan struct{})
	f.waiting = append(f.waiting, ready)
	if !f.queued {
		f.queued = true
		l.turn = append(l.turn, f)
	}
	l.dispatch()
	l.mu.Unlock()

	timer := time.NewTimer(queueWait)
	defer timer.Stop()
	select {
	case <-ready:
		return func() { l.release(f) }, nil
	case <-timer.C:
	case <-ctx.Done():
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	select {
	case <-ready: // granted meanwhile: give it back
		l.inUse--
		f.inUse--
		l.dispatch()
	default:
		for i, w := range f.waiting {
			if w == ready {
				f.waiting = append(f.waiting[:i], f.waiting[i+1:]...)
				break
			}
		}
	}
	l.forgetIdle(f)
	return nil, resource.NewTooManyRequests("too many requests, please try again later", 1)
}

// take gives f a seat.
func (l *fairLimiter) take(f *flow) {
	l.inUse++
	f.inUse++
}

// release gives back a seat of f and hands the free seats on.
func (l *fairLimiter) release(f *flow) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.inUse--
	f.inUse--
	l.dispatch()
	l.forgetIdle(f)
}

// dispatch gives free seats to waiting requests, one per flow in turn, skipping
// flows at their share.
func (l *fairLimiter) dispatch() {
	for l.inUse < l.seats && len(l.turn) > 0 {
		served := false
		for i := 0; i < len(l.turn) && l.inUse < l.seats; {
			f := l.turn[i]
			if len(f.waiting) == 0 {
				f.queued = false
				l.turn = append(l.turn[:i], l.turn[i+1:]...)
				l.forgetIdle(f)
				continue
			}
			if f.inUse >= l.perFlow {
				i++
				continue
			}
			ready := f.waiting[0]
			f.waiting = f.waiting[1:]
			l.take(f)
			close(ready)
			served = true
			// f goes to the back of the turn.
			l.turn = append(append(l.turn[:i], l.turn[i+1:]...), f)
			if len(f.waiting) == 0 {
				f.queued = false
				l.turn = l.turn[:len(l.turn)-1]
			}
		}
		if !served {
			return
		}
	}
}

// forgetIdle drops f when it holds and waits for nothing.
func (l *fairLimiter) forgetIdle(f *flow) {
	if f.inUse == 0 && len(f.waiting) == 0 && !f.queued {
		delete(l.flows, f.key)
	}
}

// flowKey is the flow of a request's caller: the user's name, or the client's
// address for an anonymous caller.
func flowKey(r *http.Request, user *store.UserInfo) string {
	if user != nil && user.Name != "" {
		return "user:" + user.Name
	}
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	return "anonymous:" + host
}

// bodyReadTimeout is how long a request has to send its body: bodyReadBase, and the
// time its declared size takes at bodyReadRate (the largest body the codec reads
// when it declares none), within limit.
func bodyReadTimeout(r *http.Request, maxBody int64, limit time.Duration) time.Duration {
	size := r.ContentLength
	if size < 0 || size > maxBody {
		size = maxBody
	}
	d := bodyReadBase + time.Duration(size)*time.Second/bodyReadRate
	return min(d, limit)
}

// limitBodyRead sets the connection's read deadline for a request served within
// timeout: a client may not hold its seat longer than its body's declared size
// allows while it sends it (bodyReadTimeout). Once the body has been read the
// deadline moves to the end of the request, as the connection is then read only to
// notice a client that left, which ends the request.
func limitBodyRead(w http.ResponseWriter, r *http.Request, maxBody int64, timeout time.Duration) {
	rc := http.NewResponseController(w)
	now := time.Now()
	if r.ContentLength == 0 || r.Body == nil || r.Body == http.NoBody {
		_ = rc.SetReadDeadline(now.Add(timeout))
		return
	}
	_ = rc.SetReadDeadline(now.Add(bodyReadTimeout(r, maxBody, timeout)))
	r.Body = &deadlineBody{ReadCloser: r.Body, rc: rc, after: now.Add(timeout)}
}

// deadlineBody is a request body that moves the connection's read deadline to after
// once it has been read to its end (or failed).
type deadlineBody struct {
	io.ReadCloser
	rc    *http.ResponseController
	after time.Time
	done  bool
}

func (b *deadlineBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err != nil && !b.done {
		b.done = true
		_ = b.rc.SetReadDeadline(b.after)
	}
	return n, err
}

// refuseUnread closes the connection after a request refused before its body was
// read: net/http would otherwise read what is left of the body before it answers, so
// that a refused client trickling its body would still hold a connection for as long
// as it likes.
func refuseUnread(w http.ResponseWriter, r *http.Request) {
	if r.ContentLength != 0 && r.Body != nil && r.Body != http.NoBody {
		w.Header().Set("Connection", "close")
	}
}
