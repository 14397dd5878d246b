"""Ask options as keyword arguments, batch rows and OpenAI Batch lines, all turned into AskRequest messages.

Options left out are not sent, so the gateway applies its own defaults (k 30, HYBRID, 512 tokens, OCCLUSION).
Rows take the same names as these keywords (and as the CLI's batch rows), so one file works everywhere.
"""
import hashlib
import json
import re
from pathlib import Path

from .v1 import attr_rag_service_pb2, attribution_pb2, batch_pb2, chunk_pb2, engine_pb2, pipeline_pb2, retrieval_pb2

# keyword -> (message path, field, kind)
_OPTIONS = {
    "k": ("retrieval", "k", "count"),
    "mode": ("retrieval", "mode", retrieval_pb2.RetrievalMode),
    "max_tokens": ("generation", "max_tokens", "count"),
    "strategy": ("generation", "strategy", engine_pb2.EngineStrategy),
    "recompute_gap": ("generation", "recompute_gap", "count"),
    "recompute_tail": ("generation", "recompute_tail", "count"),
    "baseline": ("baseline", "baseline", pipeline_pb2.Baseline),
    "metrics": ("selection", "metrics", attribution_pb2.AttributionMetric),
    "tau": ("selection", "tau", "number"),
    "min_votes": ("selection", "min_votes", "count"),
    "epsilon": ("selection", "epsilon", "number"),
    "max_sets": ("selection", "max_sets", "count"),
    "max_gap": ("selection", "max_gap", "whole"),
    "method": ("attribution", "method", attribution_pb2.AttributionMethod),
    "samples": ("attribution", "samples", "count"),
    "seed": ("attribution", "seed", "whole"),
    "beta_alpha": ("attribution", "beta_alpha", "number"),
    "beta_beta": ("attribution", "beta_beta", "number"),
    "sentences": ("attribution", "sentences", "bool"),
    "sentence_threshold": ("attribution", "sentence_threshold", "number"),
    "include_occluded_answers": ("", "include_occluded_answers", "bool"),
    "request_id": ("", "request_id", "text"),
}
#: Option names a row or ask() takes besides the question.
OPTION_NAMES = tuple(_OPTIONS)
_ROW_ALIASES = {"include_occluded": "include_occluded_answers"}
# The CLI's short names for two methods, so a batch file written for `attr-rag batch` works here unchanged.
_METHOD_ALIASES = {"leave-one-out": "leave_one_out_loglik", "shapley": "shapley_exact"}


def _enum_value(enum_type, text, option):
    """"hybrid" -> RETRIEVAL_MODE_HYBRID; also "rougeL" -> ROUGE_L and "kernel-shap" -> KERNEL_SHAP."""
    prefix = "".join("_" + c if c.isupper() else c for c in enum_type.DESCRIPTOR.name).lstrip("_").upper() + "_"
    snake = re.sub(r"(?<=[a-z0-9])([A-Z])", r"_\1", str(text)).replace("-", "_").upper()
    names = [n[len(prefix):].lower() for n in enum_type.keys() if not n.endswith("_UNSPECIFIED")]
    try:
        return enum_type.Value(prefix + snake)
    except ValueError:
        raise ValueError(f"{option} must be one of {', '.join(names)}; got {text!r}") from None


def _check(kind, value, option):
    if kind in ("count", "whole"):
        low = 1 if kind == "count" else 0
        if isinstance(value, bool) or not isinstance(value, int) or value < low:
            raise ValueError(f"{option} must be an integer >= {low}; got {value!r}")
    elif kind == "number":
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ValueError(f"{option} must be a number; got {value!r}")
    elif kind == "bool":
        if not isinstance(value, bool):
            raise ValueError(f"{option} must be true or false; got {value!r}")
    elif kind == "text":
        if not isinstance(value, str):
            raise ValueError(f"{option} must be a string; got {value!r}")
    return value


def ask_request(question, **options):
    """An AskRequest for the question with only the given options set."""
    if not isinstance(question, str):
        raise ValueError(f"question must be a string; got {question!r}")
    request = attr_rag_service_pb2.AskRequest(question=question)
    for option, value in options.items():
        if value is None:
            continue
        if option not in _OPTIONS:
            raise ValueError(f"unknown option {option!r}; Ask takes {', '.join(OPTION_NAMES)}")
        path, name, kind = _OPTIONS[option]
        target = getattr(request, path) if path else request
        if isinstance(kind, str):
            setattr(target, name, _check(kind, value, option))
        elif option == "metrics":
            values = value.split(",") if isinstance(value, str) else value
            getattr(target, name).extend(_enum_value(kind, v.strip(), option) for v in values)
        else:
            value = _METHOD_ALIASES.get(value, value) if option == "method" else value
            setattr(target, name, _enum_value(kind, value, option))
    return request


def item_from_row(row, where="row"):
    """A BatchItem from our row shape {"id", "question", ...options} or an OpenAI Batch input line
    {"custom_id", "method": "POST", "url": "/v1/ask", "body": {"question", ...options}}."""
    if not isinstance(row, dict):
        raise ValueError(f"{where}: expected a JSON object")
    if "custom_id" in row:
        extra = set(row) - {"custom_id", "method", "url", "body"}
        if extra:
            raise ValueError(f"{where}: unknown field {sorted(extra)[0]!r} in an OpenAI Batch line")
        if row.get("method") != "POST" or row.get("url") != "/v1/ask":
            raise ValueError(f"{where}: an OpenAI Batch line needs \"method\": \"POST\" and \"url\": \"/v1/ask\"")
        if not isinstance(row.get("body"), dict):
            raise ValueError(f"{where}: \"body\" must be a JSON object with the question")
        row = {"id": row["custom_id"], **row["body"]}
    item_id = row.get("id")
    if not isinstance(item_id, str) or not item_id:
        raise ValueError(f"{where}: field 'id' (or 'custom_id') must be a non-empty string")
    if not isinstance(row.get("question"), str):
        raise ValueError(f"{where}: field 'question' must be a string")
    options = {_ROW_ALIASES.get(k, k): v for k, v in row.items() if k not in ("id", "question")}
    try:
        request = ask_request(row["question"], **options)
    except ValueError as error:
        raise ValueError(f"{where}: {error}") from None
    return batch_pb2.BatchItem(item_id=item_id, request=request)


def items_from_rows(rows):
    """BatchItems from rows (dicts), every one checked first; item ids must be unique."""
    items, seen = [], set()
    for number, row in enumerate(rows, start=1):
        item = item_from_row(row, f"row {number}")
        if item.item_id in seen:
            raise ValueError(f"row {number}: item id {item.item_id!r} is used by an earlier row")
        seen.add(item.item_id)
        items.append(item)
    if not items:
        raise ValueError("a batch needs at least one item")
    return items


def items_from_file(path):
    """BatchItems from a JSON-lines file of our rows and/or OpenAI Batch input lines; errors name file:line."""
    path = Path(path)
    items, seen = [], set()
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        where = f"{path}:{number}"
        try:
            row = json.loads(line)
        except json.JSONDecodeError as error:
            raise ValueError(f"{where}: not valid JSON ({error})") from None
        item = item_from_row(row, where)
        if item.item_id in seen:
            raise ValueError(f"{where}: item id {item.item_id!r} is used by an earlier line")
        seen.add(item.item_id)
        items.append(item)
    if not items:
        raise ValueError(f"{path} has no rows")
    return items


def default_batch_id(items):
    """A batch id derived from the items, so creating the same batch twice (a retry, a rerun after a crash) finds
    the first one instead of submitting a second."""
    digest = hashlib.sha256(b"".join(i.SerializeToString(deterministic=True) for i in items)).hexdigest()
    return "py-" + digest[:24]


def context_set(value, index):
    """Attribute's sets: a string (the set's text) or a dict {"text", "set_id"?, "chunk_ids"?}."""
    if isinstance(value, str):
        return chunk_pb2.ContextSet(text=value)
    if isinstance(value, dict) and isinstance(value.get("text"), str):
        unknown = set(value) - {"text", "set_id", "chunk_ids"}
        if unknown:
            raise ValueError(f"sets[{index}]: unknown field {sorted(unknown)[0]!r}; a set takes text, set_id, chunk_ids")
        return chunk_pb2.ContextSet(**value)
    raise ValueError(f"sets[{index}] must be a string or a dict with 'text'; got {value!r}")


def attribute_request(question, sets, initial_answer=None, **options):
    """An AttributeRequest: Ask's generation, selection and attribution options apply; retrieval ones do not."""
    refused = {"k", "mode", "baseline", "max_gap", "request_id"} & {k for k, v in options.items() if v is not None}
    if refused:
        raise ValueError(f"Attribute takes no {sorted(refused)[0]!r}: it attributes the sets you give, without retrieval")
    ask = ask_request(question, **options)
    if not sets:
        raise ValueError("sets must hold at least one context set")
    request = attr_rag_service_pb2.AttributeRequest(
        question=question, sets=[context_set(s, i) for i, s in enumerate(sets)], include_occluded_answers=ask.include_occluded_answers)
    for name in ("selection", "generation", "attribution"):
        if ask.HasField(name):
            getattr(request, name).CopyFrom(getattr(ask, name))
    if initial_answer is not None:
        request.initial_answer = initial_answer
    return request
