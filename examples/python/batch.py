#!/usr/bin/env python3
"""Submit a batch of questions to the Attr-RAG gateway, watch it run and write every result.

    python batch.py --address localhost:50051 --file questions.jsonl --out results.jsonl

Uses the attr_rag package (clients/python; install it as its README says and run with that environment's
python). The file has one JSON object per line: {"id": "...", "question": "...", and optionally "k",
"max_tokens", "mode" (dense|bm25|hybrid), "baseline" (none|topk|rerank), ...}, or OpenAI Batch input lines.
The batch id defaults to a digest of the items, so running the same command again (after a crash, a Ctrl-C, a
dropped connection) finds the same batch instead of submitting a second one, and --out is resumed: rows already
in it are never written again.
Exit codes: 0 the batch completed, 1 it was cancelled, 2 a gRPC error or a bad row, 130 interrupted.
"""
import argparse
import json
import os
import sys
from pathlib import Path

import attr_rag


def parse_args():
    p = argparse.ArgumentParser(description="Run a batch of questions through the gateway's BatchService.")
    p.add_argument("--address", required=True, help="gateway HOST:PORT")
    p.add_argument("--file", required=True, type=Path, help="questions, one JSON object per line")
    p.add_argument("--out", required=True, type=Path, help="results, one JSON object per line (resumed)")
    p.add_argument("--id", help="batch id (default: derived from the items, so the same command resumes)")
    p.add_argument("--token", help="bearer token (default: $ATTR_RAG_TOKEN)")
    p.add_argument("--tls-ca", metavar="FILE", help="use TLS, trusting this PEM root certificate")
    return p.parse_args()


def result_row(result):
    """The row written for one item: its answer and kept sets, or its own status and why."""
    row = {
        "id": result.item_id,
        "question": result.question,
        "status": "ok" if result.ok else result.status,
        "answer": result.final_answer.text if result.final_answer else "",
        "kept_sets": [{"set_id": d.set_id, "reason_text": d.reason_text} for d in result.selection.sets if d.kept] if result.selection else [],
        "attribution": [{"set_id": r.set_id, "alpha": r.alpha} for r in result.attribution.rows] if result.attribution else None,
    }
    if not result.ok:
        row["error"] = result.status_message
    return row


def progress(batch):
    c = batch.counts
    eta = f", ETA {batch.eta_seconds:.0f} s" if batch.eta_seconds is not None else ""
    return (f"batch {batch.batch_id}: {batch.state}, {batch.finished_items}/{batch.total_items} done ({c['succeeded']} ok, "
            f"{c['failed']} failed, {c['cancelled']} cancelled, {c['running']} running; {batch.items_per_minute:.1f}/min{eta})")


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
    with attr_rag.Client(args.address, token=args.token, tls_ca=args.tls_ca) as client:
        try:
            batch = client.batches.create(file=args.file, batch_id=args.id, label=args.file.name)
        except (OSError, ValueError) as error:
            print(f"batch: {error}; nothing was submitted", file=sys.stderr)
            return 2
        except attr_rag.RpcError as error:
            print(f"error: {error}", file=sys.stderr)
            return 2
        print(f"batch: {'submitted' if batch.created else 'already submitted'} {batch.batch_id} ({batch.total_items} items)", file=sys.stderr)
        try:
            last = client.batches.wait(batch.batch_id, on_progress=lambda b: print(progress(b), file=sys.stderr))
            ids = existing_ids(args.out)
            seen, written = set(ids), 0
            with args.out.open("a", encoding="utf-8") as out:
                for result in client.batches.results(batch.batch_id):
                    if result.item_id not in seen:
                        out.write(json.dumps(result_row(result)) + "\n")
                        seen.add(result.item_id)
                        written += 1
                out.flush()
                os.fsync(out.fileno())
        except attr_rag.RpcError as error:
            print(f"error: {error}", file=sys.stderr)
            return 2
        except KeyboardInterrupt:
            print("interrupted: the batch goes on on the server; run the same command again to resume", file=sys.stderr)
            return 130
    print(f"batch: {written} results written to {args.out} ({len(ids)} were there already)", file=sys.stderr)
    return 0 if last.state == "completed" else 1


if __name__ == "__main__":
    sys.exit(main())
