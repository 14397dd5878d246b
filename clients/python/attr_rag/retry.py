"""Retries with exponential backoff for the transient statuses only.

UNAVAILABLE (the gateway restarting, a dropped connection) and RESOURCE_EXHAUSTED (its admission queue is full)
go away by themselves; every other status would fail the same way again, so it is raised at once. A streamed
call is retried only before its first event: once a stage has reached the caller, a second call would repeat it.
"""
import random
from dataclasses import dataclass, field

import grpc


@dataclass(frozen=True)
class RetryPolicy:
    #: Calls in all, the first included; 1 turns retries off.
    max_attempts: int = 5
    #: Seconds before the first retry; each later wait is `multiplier` times longer, at most `max_backoff`.
    initial_backoff: float = 0.2
    max_backoff: float = 5.0
    multiplier: float = 2.0
    #: Each wait is drawn from [wait * (1 - jitter), wait] so that clients refused together do not return together.
    jitter: float = 0.2
    codes: frozenset = field(default_factory=lambda: frozenset({grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.RESOURCE_EXHAUSTED}))

    def __post_init__(self):
        if self.max_attempts < 1:
            raise ValueError(f"max_attempts must be at least 1, got {self.max_attempts}")
        if self.initial_backoff < 0 or self.max_backoff < 0 or self.multiplier < 1 or not 0 <= self.jitter <= 1:
            raise ValueError("backoffs must be >= 0, multiplier >= 1 and jitter in [0, 1]")

    def retries(self, code, attempt):
        """Whether a call that failed with `code` on attempt number `attempt` (1-based) is tried again."""
        return code in self.codes and attempt < self.max_attempts

    def backoff(self, attempt):
        """Seconds to wait after failed attempt number `attempt` (1-based)."""
        wait = min(self.max_backoff, self.initial_backoff * self.multiplier ** (attempt - 1))
        return wait * (1 - self.jitter * random.random())


NO_RETRY = RetryPolicy(max_attempts=1)
