package attrrag

import (
	"math"
	"math/rand"
	"sync"
	"time"

	"google.golang.org/grpc/codes"
)

// RetryPolicy says how often and how patiently a call refused for a passing reason is tried again: only
// codes.Unavailable (the gateway unreachable or restarting) and codes.ResourceExhausted (its admission queue
// full) are retried; every other code is returned at once. Zero fields take DefaultRetryPolicy's values.
type RetryPolicy struct {
	// MaxAttempts counts the first try: 1 turns retries off.
	MaxAttempts int
	// InitialBackoff is the wait before the second attempt.
	InitialBackoff time.Duration
	// MaxBackoff caps every wait, jitter included.
	MaxBackoff time.Duration
	// Multiplier grows the wait from one retry to the next.
	Multiplier float64
	// Jitter spreads each wait by up to this fraction either way (0.2: ±20 %), so clients refused together do
	// not come back together. Negative: no jitter.
	Jitter float64
}

// DefaultRetryPolicy waits about 0.2, 0.4, 0.8 and 1.6 s between five attempts.
var DefaultRetryPolicy = RetryPolicy{MaxAttempts: 5, InitialBackoff: 200 * time.Millisecond, MaxBackoff: 5 * time.Second, Multiplier: 2, Jitter: 0.2}

// withDefaults fills the zero fields from DefaultRetryPolicy.
func (p RetryPolicy) withDefaults() RetryPolicy {
	d := DefaultRetryPolicy
	if p.MaxAttempts <= 0 {
		p.MaxAttempts = d.MaxAttempts
	}
	if p.InitialBackoff <= 0 {
		p.InitialBackoff = d.InitialBackoff
	}
	if p.MaxBackoff <= 0 {
		p.MaxBackoff = d.MaxBackoff
	}
	if p.Multiplier <= 0 {
		p.Multiplier = d.Multiplier
	}
	if p.Jitter == 0 {
		p.Jitter = d.Jitter
	}
	return p
}

// backoff is the wait after the failed attempt (1 for the first try), given random, uniform in [0, 1).
func (p RetryPolicy) backoff(attempt int, random float64) time.Duration {
	base := float64(p.InitialBackoff) * math.Pow(p.Multiplier, float64(attempt-1))
	if max := float64(p.MaxBackoff); base > max {
		base = max
	}
	wait := base
	if p.Jitter > 0 {
		wait = base * (1 + p.Jitter*(2*random-1))
	}
	if max := float64(p.MaxBackoff); wait > max {
		wait = max
	}
	if wait < 0 {
		wait = 0
	}
	return time.Duration(wait)
}

// retryable says whether a call that failed with code may succeed if tried again unchanged.
func retryable(code codes.Code) bool {
	return code == codes.Unavailable || code == codes.ResourceExhausted
}

// jitterSource is seeded per process: before Go 1.20 math/rand's global source starts from the same seed in
// every process, so clients refused together would draw the same waits and come back together.
var jitterSource = struct {
	sync.Mutex
	*rand.Rand
}{Rand: rand.New(rand.NewSource(time.Now().UnixNano()))}

func jitterDraw() float64 {
	jitterSource.Lock()
	defer jitterSource.Unlock()
	return jitterSource.Float64()
}
