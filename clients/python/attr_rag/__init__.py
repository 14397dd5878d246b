"""Attr-RAG's Python client: typed Ask/Attribute results, streamed stages, durable batches, webhook checks.

    from attr_rag import Client
    with Client("127.0.0.1:50051", token="...") as client:
        result = client.ask("How do I collect oxygen gas over water?", k=8, max_tokens=256)
        print(result.final_answer.text, result.selection.selected_set_ids)
"""
from .aio import AsyncBatches, AsyncClient
from .batch_types import Batch, BatchResult, Download
from .batches import Batches
from .client import Client
from .errors import (
    AlreadyExistsError, AttrRagError, CancelledError, DeadlineExceededError, FailedPreconditionError, HttpError,
    InternalError, InvalidArgumentError, NotFoundError, PermissionDeniedError, ResourceExhaustedError, RpcError,
    UnauthenticatedError, UnavailableError, UnimplementedError, WebhookVerificationError,
)
from .requests import OPTION_NAMES
from .retry import NO_RETRY, RetryPolicy
from .types import (
    STAGES, AnswerDelta, AskEvent, AskResult, AttributeResult, AttributionRow, AttributionTable, Chunk, ChunkSet,
    Citation, Done, FinalAnswer, GapFill, OcclusionProgress, RerankedSet, ScoredChunk, Selection, Sentence, SetDecision,
)
from .webhooks import sign_webhook, verify_webhook

__version__ = "0.1.0"
