#!/usr/bin/python3
"""Submit a batch of questions to the Attr-RAG gateway, watch it run and write every result.

    /usr/bin/python3 examples/python/batch.py --address localhost:50051 --file questions.jsonl --out results.jsonl

The file has one JSON object per line: {"id": "...", "question": "...", and optionally "k", "max_tokens",
"mode" (dense|bm25|hybrid), "baseline" (none|topk|rerank)}. The batch id defaults to a digest of the file, so
running the same command again (after a crash, a Ctrl-C, a dropped connection) finds the same batch instead of
submitting a second one, and --out is resumed: rows already in it are never written again.
Exit codes: 0 the batch completed, 1 it was cancelled or a setup problem, 2 gRPC error or a bad row, 130 interrupted.
"""
import argparse
import hashlib
import json
import os
import sys
from pathlib import Path

try:
    import grpc
    from google.protobuf import json_format
except ImportError as error:
    sys.exit(f"batch: {error}\nrun with Debian's python: /usr/bin/python3 {sys.argv[0]} ...\n"
             "(missing packages: apt-get install -y python3-grpcio python3-grpc-tools)")
from ask_client import ensure_stubs, open_channel  # noqa: E402 -- the same generated stubs and channel as ask_client

ROW_FIELDS = {"id", "question", "k", "max_tokens", "mode", "baseline"}


def parse_args():
    p = argparse.ArgumentParser(description="Run a batch of questions through AttrRagService's BatchService.")
    p.add_argument("--address", required=True, help="gateway HOST:PORT")
    p.add_argument("--file", required=True, type=Path, help="questions, one JSON object per line")
    p.add_argument("--out", required=True, type=Path, help="results, one JSON object per line (resumed)")
    p.add_argument("--id", help="batch id (default: derived from the file, so the same command resumes)")
    p.add_argument("--token", default=os.environ.get("ATTR_RAG_TOKEN"), help="bearer token (default: $ATTR_RAG_TOKEN)")
    p.add_argument("--tls-ca", metavar="FILE", help="use TLS, trusting this PEM root certificate")
    return p.parse_args()


def read_rows(path):
    """Every row checked before anything is sent: a bad one names its line and nothing is submitted."""
    rows, seen = [], set()
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as error:
            raise ValueError(f"{path}:{number}: not valid JSON ({error})")
        if not isinstance(row, dict):
            raise ValueError(f"{path}:{number}: expected a JSON object")
        unknown = set(row) - ROW_FIELDS
        if unknown:
            raise ValueError(f"{path}:{number}: unknown field {sorted(unknown)[0]!r}; rows take {', '.join(sorted(ROW_FIELDS))}")
        if not isinstance(row.get("id"), str) or not row["id"] or row["id"] in seen:
            raise ValueError(f"{path}:{number}: field 'id' must be a non-empty string not used by another row")
        if not isinstance(row.get("question"), str):
            raise ValueError(f"{path}:{number}: field 'question' must be a string")
        for field in ("k", "max_tokens"):
            if field in row and (not isinstance(row[field], int) or row[field] < 1):
                raise ValueError(f"{path}:{number}: field {field!r} must be a positive integer")
        seen.add(row["id"])
        rows.append(row)
    if not rows:
        raise ValueError(f"{path} has no rows")
    return rows


def build_items(pb, rows):
    items = []
    for row in rows:
        request = pb.svc.AskRequest(question=row["question"])
        if "k" in row:
            request.retrieval.k = row["k"]
        if "max_tokens" in row:
            request.generation.max_tokens = row["max_tokens"]
        if "mode" in row:
            request.retrieval.mode = pb.retrieval.RetrievalMode.Value("RETRIEVAL_MODE_" + row["mode"].upper())
        if "baseline" in row:
            request.baseline.baseline = pb.pipeline.Baseline.Value("BASELINE_" + row["baseline"].upper())
        items.append(pb.batch.BatchItem(item_id=row["id"], request=request))
    return items


def result_row(pb, result):
    """The row written for one item: its answer and kept sets, or its own status and why."""
    ok = result.status_code == 0
    row = {
        "id": result.item_id,
        "question": result.question,
        "status": "ok" if ok else _code(result.status_code).name,
        "answer": result.final_answer.text,
        "kept_sets": [{"set_id": s.set_id, "reason_text": s.reason_text}
                      for s in result.selection.sets if s.set_id in set(result.selection.selected_set_ids)],
        "attribution": json_format.MessageToDict(result.attribution, preserving_proto_field_name=True),
    }
    if not ok:
        row["error"] = result.status_message
    return row


def _code(number):
    return next(code for code in grpc.StatusCode if code.value[0] == number)


def progress(pb, batch):
    c = batch.counts
    done = c.succeeded + c.failed + c.cancelled
    state = pb.batch.BatchState.Name(batch.state).removeprefix("BATCH_STATE_").lower()
    eta = f", ETA {batch.eta_seconds:.0f} s" if batch.HasField("eta_seconds") else ""
    return f"batch {batch.batch_id}: {state}, {done}/{batch.total_items} done ({c.succeeded} ok, {c.failed} failed, " \
           f"{c.cancelled} cancelled, {c.running} running; {batch.items_per_minute:.1f}/min{eta})"


def existing_ids(path):
    """Ids already in --out; a torn last line (a crash mid-write) is cut off."""
    if not path.exists():
        return []
    text = path.read_bytes()
    keep = text.rfind(b"\n") + 1
    if keep < len(text):
        path.write_bytes(text[:keep])
    return [json.loads(line)["id"] for line in text[:keep].decode("utf-8").splitlines() if line.strip()]


def main():
    args = parse_args()
    ensure_stubs()
    from attr_rag.v1 import attr_rag_service_pb2, batch_pb2, batch_service_pb2, batch_service_pb2_grpc, pipeline_pb2, retrieval_pb2

    class pb:  # the generated modules under short names
        svc, batch, service, pipeline, retrieval = attr_rag_service_pb2, batch_pb2, batch_service_pb2, pipeline_pb2, retrieval_pb2

    try:
        rows = read_rows(args.file)
    except (OSError, ValueError) as error:
        print(f"batch: {error}; nothing was submitted", file=sys.stderr)
        return 2
    items = build_items(pb, rows)
    batch_id = args.id or "py-" + hashlib.sha256(b"".join(i.SerializeToString() for i in items)).hexdigest()[:24]
    metadata = [("authorization", f"Bearer {args.token}")] if args.token else []
    # A CreateBatch carries every item: no client-side size limit (the server has its own).
    with open_channel(args) as channel:
        stub = batch_service_pb2_grpc.BatchServiceStub(channel)
        try:
            created = stub.CreateBatch(pb.service.CreateBatchRequest(batch_id=batch_id, items=items, label=args.file.name), metadata=metadata)
            print(f"batch: {'submitted' if created.created else 'already submitted'} {batch_id} ({created.batch.total_items} items)", file=sys.stderr)
            last = created.batch
            for update in stub.WatchBatch(pb.service.WatchBatchRequest(batch_id=batch_id), metadata=metadata):
                last = update.batch
                print(progress(pb, last), file=sys.stderr)
            ids = existing_ids(args.out)
            seen = set(ids)
            written = 0
            with args.out.open("a", encoding="utf-8") as out:
                for response in stub.ListBatchResults(pb.service.ListBatchResultsRequest(batch_id=batch_id, offset=0), metadata=metadata):
                    if response.result.item_id in seen:
                        continue
                    out.write(json.dumps(result_row(pb, response.result)) + "\n")
                    seen.add(response.result.item_id)
                    written += 1
                out.flush()
                os.fsync(out.fileno())
        except grpc.RpcError as error:
            print(f"error: {error.code().name}: {error.details()}", file=sys.stderr)
            return 2
        except KeyboardInterrupt:
            print("interrupted: the batch goes on on the server; run the same command again to resume", file=sys.stderr)
            return 130
    print(f"batch: {written} results written to {args.out} ({len(ids)} were there already)", file=sys.stderr)
    return 0 if last.state == pb.batch.BatchState.Value("BATCH_STATE_COMPLETED") else 1


if __name__ == "__main__":
    sys.exit(main())
