"""Typed results: what the gateway answered, as dataclasses with plain Python values.

Enum values are their proto names without the type's prefix, lower-cased (ATTRIBUTION_METRIC_ROUGE_L ->
"rouge_l"). Offsets (citations, sentences) count UTF-16 code units, as in the protos; `text` fields hold the
span already cut out. Every object keeps the message it came from in `.message`, for fields not mapped here.
"""
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional


def enum_name(enum_type, number):
    """ATTRIBUTION_METRIC_ROUGE_L -> "rouge_l"; a number these stubs do not know stays a number."""
    try:
        name = enum_type.Name(number)
    except ValueError:
        return number
    prefix = "".join("_" + c if c.isupper() else c for c in enum_type.DESCRIPTOR.name).lstrip("_").upper() + "_"
    return name[len(prefix):].lower() if name.startswith(prefix) else name.lower()


def utf16_slice(text, start, end):
    # The gateway counts offsets in UTF-16 code units (JavaScript string indices), not code points.
    return text.encode("utf-16-le")[2 * start:2 * end].decode("utf-16-le", errors="replace")


def _optional(message, name):
    return getattr(message, name) if message.HasField(name) else None


def _timings(message):
    return {f.name: value for f, value in message.ListFields()}


def _counters(message):
    return {f.name: value for f, value in message.ListFields()}


@dataclass
class Chunk:
    id: str
    doc_id: str
    ordinal: int
    text: str
    doc_title: str
    source: str
    message: Any = field(repr=False, compare=False, default=None)

    @classmethod
    def from_proto(cls, m):
        return cls(m.id, m.doc_id, m.ordinal, m.text, m.doc_title, m.source, m)


@dataclass
class ScoredChunk:
    chunk: Chunk
    score: float
    rank: int
    message: Any = field(repr=False, compare=False, default=None)

    @classmethod
    def from_proto(cls, m):
        return cls(Chunk.from_proto(m.chunk), m.score, m.rank, m)


@dataclass
class ChunkSet:
    """Adjacent chunks of one document, attributed as one unit (set id "doc#first-last")."""
    set_id: str
    doc_id: str
    first_ordinal: int
    last_ordinal: int
    chunk_ids: List[str]
    best_retrieval_rank: int
    message: Any = field(repr=False, compare=False, default=None)

    @classmethod
    def from_proto(cls, m):
        return cls(m.set_id, m.doc_id, m.first_ordinal, m.last_ordinal, [c.chunk_id for c in m.chunks], m.best_retrieval_rank, m)


@dataclass
class RerankedSet:
    set_id: str
    score: float
    aligned_index: int

    @classmethod
    def from_proto(cls, m):
        return cls(m.set_id, m.score, m.aligned_index)


@dataclass
class Sentence:
    """One sentence of an answer and the context sets whose removal most lowered its likelihood."""
    start: int
    end: int
    text: str
    supported: bool
    top_set_ids: List[str]
    drops: List[float]

    @classmethod
    def from_proto(cls, m, text, set_ids):
        top = [set_ids[i] if i < len(set_ids) else str(i) for i in m.top_sets]
        return cls(m.start, m.end, utf16_slice(text, m.start, m.end), m.supported, top, list(m.drops))


def _sentences(m, text):
    return [Sentence.from_proto(s, text, list(m.set_ids)) for s in m.sentences]


@dataclass
class AttributionRow:
    set_index: int
    set_id: str
    #: α per metric name, e.g. {"cosine": 0.66, "rouge_l": 1.0}.
    alpha: Dict[str, float]
    #: Standard errors per metric, for sampled methods only.
    std_error: Dict[str, float]


@dataclass
class AttributionTable:
    method: str
    metrics: List[str]
    rows: List[AttributionRow]
    evaluations: int
    #: Sentences of the initial answer (A_full) against every attributed set; empty when switched off.
    sentences: List[Sentence]
    message: Any = field(repr=False, compare=False, default=None)

    @classmethod
    def from_proto(cls, m, initial_answer=""):
        from .v1 import attribution_pb2 as pb

        rows = []
        for r in m.rows:
            alpha = {enum_name(pb.AttributionMetric, s.metric): s.alpha for s in r.scores}
            errors = {enum_name(pb.AttributionMetric, s.metric): s.std_error for s in r.scores if s.HasField("std_error")}
            rows.append(AttributionRow(r.set_index, r.set_id, alpha, errors))
        return cls(enum_name(pb.AttributionMethod, m.method), [enum_name(pb.AttributionMetric, x) for x in m.metrics],
                   rows, m.evaluations, _sentences(m.sentences, initial_answer), m)

    def alpha(self, set_id, metric):
        """α of one set for one metric."""
        for row in self.rows:
            if row.set_id == set_id:
                return row.alpha[metric]
        raise KeyError(f"no set {set_id!r} in the attribution table")


@dataclass
class SetDecision:
    set_id: str
    kept: bool
    reason: str
    reason_text: str
    votes: int
    argmax_votes: int
    mean_alpha: float


@dataclass
class Selection:
    """Which sets were kept for the final answer, and why each was kept or dropped."""
    selected_set_ids: List[str]
    best_set_id: str
    sets: List[SetDecision]
    flags: List[str]
    summary: str
    message: Any = field(repr=False, compare=False, default=None)

    @classmethod
    def from_proto(cls, m):
        from .v1 import selection_pb2 as pb

        sets = [SetDecision(s.set_id, s.decision == pb.SELECTION_DECISION_KEPT, enum_name(pb.SelectionReason, s.reason),
                            s.reason_text, s.votes, s.argmax_votes, s.mean_alpha) for s in m.sets]
        return cls(list(m.selected_set_ids), m.best_set_id, sets, [enum_name(pb.SelectionFlag, f) for f in m.flags], m.summary, m)


@dataclass
class GapFill:
    #: Chunks added between kept sets of one document, as "doc_id:first-last" ranges.
    gaps: List[str]
    added_chunks: List[Chunk]

    @classmethod
    def from_proto(cls, m):
        gaps = [f"{g.range.doc_id}:{g.range.first_ordinal}-{g.range.last_ordinal}" for g in m.gaps]
        return cls(gaps, [Chunk.from_proto(c) for c in m.added_chunks])


@dataclass
class Citation:
    start: int
    end: int
    #: The cited span of the answer.
    text: str
    chunk_ids: List[str]
    kind: str
    score: Optional[float]


@dataclass
class FinalAnswer:
    text: str
    citations: List[Citation]
    context_chunk_ids: List[str]
    #: Which context block shaped which sentence; empty when switched off.
    sentences: List[Sentence]
    message: Any = field(repr=False, compare=False, default=None)

    @classmethod
    def from_proto(cls, m):
        from .v1 import pipeline_pb2 as pb

        citations = [Citation(c.start, c.end, utf16_slice(m.text, c.start, c.end), list(c.chunk_ids),
                              enum_name(pb.CitationKind, c.kind), _optional(c, "score")) for c in m.citations]
        return cls(m.text, citations, list(m.context_chunk_ids), _sentences(m.sentences, m.text), m)


@dataclass
class Done:
    #: Milliseconds per stage that ran ("retrieve_ms", ..., "total_ms").
    timings: Dict[str, float]
    counters: Dict[str, int]
    warnings: List[str]

    @classmethod
    def from_proto(cls, m):
        return cls(_timings(m.timings), _counters(m.counters), list(m.warnings))


@dataclass
class OcclusionProgress:
    done: int
    total: int
    #: Occluded answers that finished since the last event: (set_id, answer text or None).
    finished: List[tuple]

    @classmethod
    def from_proto(cls, m):
        return cls(m.done, m.total, [(o.set_id, _optional(o, "answer_text")) for o in m.finished])


@dataclass
class AnswerDelta:
    text: str
    #: Only on an answer's last delta: "stop", "length", ...; None before.
    finish_reason: Optional[str]

    @classmethod
    def from_proto(cls, m):
        from .v1 import engine_pb2 as pb

        return cls(m.text, enum_name(pb.FinishReason, m.finish_reason) if m.finish_reason else None)


_STAGES = {
    "retrieved": lambda m: [ScoredChunk.from_proto(c) for c in m.chunks],
    "aligned": lambda m: [ChunkSet.from_proto(s) for s in m.sets],
    "reranked": lambda m: [RerankedSet.from_proto(s) for s in m.sets],
    "initial_answer_delta": AnswerDelta.from_proto,
    "occlusion_progress": OcclusionProgress.from_proto,
    "attribution": AttributionTable.from_proto,
    "selection": Selection.from_proto,
    "gap_fill": GapFill.from_proto,
    "final_answer_delta": AnswerDelta.from_proto,
    "final_answer": FinalAnswer.from_proto,
    "done": Done.from_proto,
}

#: The stages of an Attr-RAG Ask, in the order they stream (a baseline sends a subset).
STAGES = tuple(_STAGES)


@dataclass
class AskEvent:
    """One streamed stage. `value` is typed by stage: retrieved -> [ScoredChunk], aligned -> [ChunkSet],
    reranked -> [RerankedSet], *_answer_delta -> AnswerDelta, occlusion_progress -> OcclusionProgress,
    attribution -> AttributionTable, selection -> Selection, gap_fill -> GapFill, final_answer -> FinalAnswer,
    done -> Done; a stage newer than this package -> its message."""
    stage: str
    request_id: str
    sequence: int
    elapsed_ms: float
    value: Any
    message: Any = field(repr=False, compare=False, default=None)

    @classmethod
    def from_proto(cls, m):
        stage = m.WhichOneof("stage") or ""
        raw = getattr(m, stage) if stage else None
        value = _STAGES[stage](raw) if stage in _STAGES else raw
        return cls(stage, m.request_id, m.sequence, m.elapsed_ms, value, m)


@dataclass
class AskResult:
    """Everything one Ask streamed, gathered: the initial answer, the sets, the α table, the selection, the final
    answer with citations. A baseline Ask has no aligned sets, attribution or selection (None / empty)."""
    request_id: str = ""
    retrieved: List[ScoredChunk] = field(default_factory=list)
    sets: List[ChunkSet] = field(default_factory=list)
    reranked: List[RerankedSet] = field(default_factory=list)
    initial_answer: str = ""
    #: Occluded answers by set id (only with include_occluded_answers=True).
    occluded_answers: Dict[str, str] = field(default_factory=dict)
    attribution: Optional[AttributionTable] = None
    selection: Optional[Selection] = None
    gap_fill: Optional[GapFill] = None
    final_answer: Optional[FinalAnswer] = None
    done: Optional[Done] = None
    events: List[AskEvent] = field(default_factory=list, repr=False)

    def add(self, event):
        """Folds one streamed event in (the collectors of the sync and asyncio clients share this)."""
        self.events.append(event)
        self.request_id = self.request_id or event.request_id
        stage, value = event.stage, event.value
        if stage == "retrieved":
            self.retrieved = value
        elif stage == "aligned":
            self.sets = value
        elif stage == "reranked":
            self.reranked = value
        elif stage == "initial_answer_delta":
            self.initial_answer += value.text
        elif stage == "occlusion_progress":
            self.occluded_answers.update({set_id: text for set_id, text in value.finished if text is not None})
        elif stage == "attribution":
            self.attribution = AttributionTable.from_proto(event.message.attribution, self.initial_answer)
        elif stage == "selection":
            self.selection = value
        elif stage == "gap_fill":
            self.gap_fill = value
        elif stage == "final_answer":
            self.final_answer = value
        elif stage == "done":
            self.done = value


@dataclass
class AttributeResult:
    initial_answer: str
    attribution: AttributionTable
    selection: Selection
    #: Occluded answers by set id (only with include_occluded_answers=True).
    occluded_answers: Dict[str, str]
    timings: Dict[str, float]
    counters: Dict[str, int]
    message: Any = field(repr=False, compare=False, default=None)

    @classmethod
    def from_proto(cls, m):
        occluded = {o.set_id: o.answer_text for o in m.occluded if o.HasField("answer_text")}
        return cls(m.initial_answer, AttributionTable.from_proto(m.attribution, m.initial_answer), Selection.from_proto(m.selection),
                   occluded, _timings(m.timings), _counters(m.counters), m)
