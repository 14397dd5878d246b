"""Typed batch objects: a batch's progress and one item's result."""
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional

from .types import AttributionTable, ChunkSet, Done, FinalAnswer, Selection, enum_name

ENDED = ("completed", "cancelled")


@dataclass
class Batch:
    batch_id: str
    #: "submitting", "running", "cancelling", "completed" or "cancelled".
    state: str
    total_items: int
    #: Items per state: queued, running, succeeded, failed, cancelled.
    counts: Dict[str, int]
    label: str
    created_unix_ms: int
    finished_unix_ms: Optional[int]
    items_per_minute: float
    eta_seconds: Optional[float]
    webhook_url: str
    #: "waiting", "sending", "delivered" or "gave_up"; None without a webhook.
    webhook_state: Optional[str]
    message: Any = field(repr=False, compare=False, default=None)
    #: Only from create(): False when a batch with this id and the same items already existed.
    created: Optional[bool] = None

    @property
    def ended(self):
        return self.state in ENDED

    @property
    def finished_items(self):
        return self.counts["succeeded"] + self.counts["failed"] + self.counts["cancelled"]

    @classmethod
    def from_proto(cls, m):
        from .v1 import batch_pb2 as pb

        counts = {f: getattr(m.counts, f) for f in ("queued", "running", "succeeded", "failed", "cancelled")}
        webhook = enum_name(pb.WebhookDeliveryState, m.webhook.state) if m.HasField("webhook") else None
        return cls(m.batch_id, enum_name(pb.BatchState, m.state), m.total_items, counts, m.label, m.created_unix_ms,
                   m.finished_unix_ms if m.HasField("finished_unix_ms") else None, m.items_per_minute,
                   m.eta_seconds if m.HasField("eta_seconds") else None, m.webhook_url, webhook, m)


@dataclass
class BatchResult:
    """One item's outcome: its answer, sets, α table and selection, or its own status and why."""
    batch_id: str
    item_id: str
    index: int
    #: Position among the batch's results: pass offset + 1 to read on after this one.
    offset: int
    #: "succeeded", "failed" or "cancelled".
    state: str
    #: The item's gRPC status code name ("OK", "INVALID_ARGUMENT", ...) and message.
    status: str
    status_message: str
    question: str
    request_id: str
    initial_answer: str
    final_answer: Optional[FinalAnswer]
    sets: List[ChunkSet]
    attribution: Optional[AttributionTable]
    selection: Optional[Selection]
    done: Optional[Done]
    attempts: int
    message: Any = field(repr=False, compare=False, default=None)

    @property
    def ok(self):
        return self.state == "succeeded"

    @classmethod
    def from_proto(cls, m):
        import grpc
        from .v1 import batch_pb2 as pb

        codes = {c.value[0]: c.name for c in grpc.StatusCode}
        return cls(
            m.batch_id, m.item_id, m.index, m.offset, enum_name(pb.BatchItemState, m.state),
            codes.get(m.status_code, str(m.status_code)), m.status_message, m.question, m.request_id, m.initial_answer,
            FinalAnswer.from_proto(m.final_answer) if m.HasField("final_answer") else None,
            [ChunkSet.from_proto(s) for s in m.sets],
            AttributionTable.from_proto(m.attribution, m.initial_answer) if m.HasField("attribution") else None,
            Selection.from_proto(m.selection) if m.HasField("selection") else None,
            Done.from_proto(m.done) if m.HasField("done") else None, m.attempts, m)


@dataclass
class Download:
    """What a results download did: the file, its size, and where this download started."""
    path: Any
    size: int
    #: Bytes already in the file that were kept (0: downloaded from the start).
    resumed_from: int
    #: The gateway's x-batch-state ("running" or "ended") and x-batch-results (results in the file).
    batch_state: str
    results: int
