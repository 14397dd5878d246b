#!/usr/bin/python3
"""A lab pipeline's nightly batch, end to end: submit an OpenAI Batch file, be called back when it ends, check
the call is really from the gateway, download the results with resume.

    ATTR_RAG_WEBHOOK_SECRET=whsec_... /usr/bin/python3 examples/python/batch_pipeline.py \\
        --address gateway:50051 --http http://gateway:8080 --file nightly.jsonl --out results.jsonl \\
        --listen 0.0.0.0:9000 --webhook-url http://pipeline-host:9000/attr-rag

--file holds OpenAI Batch input lines, {"custom_id", "method": "POST", "url": "/v1/ask", "body": {"question", and
optionally "k", "max_tokens", "mode", "baseline"}}. The batch is created over gRPC with --webhook-url; this
script listens on --listen for the gateway's POST, verifies its Standard Webhooks signature (HMAC-SHA256 of
"<webhook-id>.<webhook-timestamp>.<body>" with the shared secret, $ATTR_RAG_WEBHOOK_SECRET) and that the
timestamp is recent, then downloads GET /v1/batches/<id>/results.jsonl?format=openai into --out, resuming
(HTTP Range) a partial file. Exit codes: 0 the batch completed, 1 it ended otherwise, 2 bad input or an error.
"""
import argparse
import base64
import hashlib
import hmac
import json
import os
import sys
import threading
import time
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from batch import build_items  # noqa: E402 -- the same row -> AskRequest mapping as batch.py
from ask_client import ensure_stubs, open_channel  # noqa: E402

TOLERANCE_S = 300  # a delivery older than this is refused (replay protection, as Standard Webhooks advises)


def parse_args():
    p = argparse.ArgumentParser(description="Submit an OpenAI Batch file, wait for the webhook, download the results.")
    p.add_argument("--address", required=True, help="gateway gRPC HOST:PORT")
    p.add_argument("--http", required=True, help="gateway HTTP base URL (serve --http-port)")
    p.add_argument("--file", required=True, type=Path, help="OpenAI Batch input lines")
    p.add_argument("--out", required=True, type=Path, help="results (OpenAI Batch output lines), resumed")
    p.add_argument("--listen", required=True, help="HOST:PORT to receive the webhook on")
    p.add_argument("--webhook-url", required=True, help="the URL the gateway calls (reaching --listen)")
    p.add_argument("--id", help="batch id (default: a digest of the file, so the same command finds the same batch)")
    p.add_argument("--token", default=os.environ.get("ATTR_RAG_TOKEN"), help="bearer token (default: $ATTR_RAG_TOKEN)")
    p.add_argument("--tls-ca", metavar="FILE", help="use TLS for gRPC, trusting this PEM root certificate")
    p.add_argument("--timeout", type=float, default=3600, help="seconds to wait for the webhook")
    return p.parse_args()


def read_openai_lines(path):
    rows = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        entry = json.loads(line)
        if entry.get("method") != "POST" or entry.get("url") != "/v1/ask":
            raise ValueError(f"{path}:{number}: expected method POST and url /v1/ask")
        rows.append({"id": entry["custom_id"], **entry["body"]})
    return rows


def verify(secret, headers, body):
    """Standard Webhooks: v1 signatures of id.timestamp.body; True when one matches and the timestamp is recent."""
    key = base64.b64decode(secret.removeprefix("whsec_"))
    msg_id, stamp = headers.get("webhook-id", ""), headers.get("webhook-timestamp", "0")
    if abs(time.time() - int(stamp)) > TOLERANCE_S:
        return False
    expected = base64.b64encode(hmac.new(key, f"{msg_id}.{stamp}.".encode() + body, hashlib.sha256).digest()).decode()
    return any(sig.startswith("v1,") and hmac.compare_digest(sig[3:], expected) for sig in headers.get("webhook-signature", "").split())


def receive_webhook(listen, secret, batch_id, timeout, done):
    """Serves --listen until a verified event for this batch arrives (or `done` is set); returns it or None.
    Retries of one event share its webhook-id."""
    got = {}

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self):
            body = self.rfile.read(int(self.headers.get("content-length", "0")))
            if not verify(secret, {k.lower(): v for k, v in self.headers.items()}, body):
                self.send_response(401)
                self.end_headers()
                return
            event = json.loads(body)
            self.send_response(204)  # 2xx: the gateway stops retrying
            self.end_headers()
            if event.get("data", {}).get("id") == batch_id and not done.is_set():
                got["event"] = event
                done.set()

        def log_message(self, *args):
            pass

    host, port = listen.rsplit(":", 1)
    server = ThreadingHTTPServer((host, int(port)), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        done.wait(timeout)
        return got.get("event")
    finally:
        server.shutdown()


def download(base, batch_id, out, token):
    """GET results.jsonl, resuming a partial --out with Range (completed lines never move on the server)."""
    have = out.stat().st_size if out.exists() else 0
    request = urllib.request.Request(f"{base}/v1/batches/{batch_id}/results.jsonl?format=openai")
    if token:
        request.add_header("Authorization", f"Bearer {token}")
    if have:
        request.add_header("Range", f"bytes={have}-")
    try:
        with urllib.request.urlopen(request) as response, out.open("ab" if response.status == 206 else "wb") as f:
            while chunk := response.read(1 << 16):
                f.write(chunk)
    except urllib.error.HTTPError as error:
        if error.code != 416:  # nothing new since the last download
            raise
    return out.stat().st_size


def main():
    args = parse_args()
    secret = os.environ.get("ATTR_RAG_WEBHOOK_SECRET")
    if not secret:
        print("batch_pipeline: set ATTR_RAG_WEBHOOK_SECRET (the gateway's webhook signing secret)", file=sys.stderr)
        return 2
    ensure_stubs()
    import grpc
    from attr_rag.v1 import attr_rag_service_pb2, batch_pb2, batch_service_pb2, batch_service_pb2_grpc, pipeline_pb2, retrieval_pb2

    class pb:
        svc, batch, service, pipeline, retrieval = attr_rag_service_pb2, batch_pb2, batch_service_pb2, pipeline_pb2, retrieval_pb2

    try:
        rows = read_openai_lines(args.file)
    except (OSError, ValueError, KeyError, json.JSONDecodeError) as error:
        print(f"batch_pipeline: {error}; nothing was submitted", file=sys.stderr)
        return 2
    items = build_items(pb, rows)
    batch_id = args.id or "pipe-" + hashlib.sha256(b"".join(i.SerializeToString() for i in items)).hexdigest()[:24]
    metadata = [("authorization", f"Bearer {args.token}")] if args.token else []
    # Listen before submitting: a small batch can end before a late listener is up (the gateway would retry).
    result = {}
    done = threading.Event()
    listener = threading.Thread(target=lambda: result.setdefault("event", receive_webhook(args.listen, secret, batch_id, args.timeout, done)), daemon=True)
    listener.start()
    try:
        with open_channel(args) as channel:
            stub = batch_service_pb2_grpc.BatchServiceStub(channel)
            created = stub.CreateBatch(pb.service.CreateBatchRequest(batch_id=batch_id, items=items, label=args.file.name, webhook_url=args.webhook_url), metadata=metadata)
            print(f"batch_pipeline: {'submitted' if created.created else 'already submitted'} {batch_id} ({created.batch.total_items} items); waiting for the webhook", file=sys.stderr)
            state = pb.batch.BatchState.Name(created.batch.state)
    except grpc.RpcError as error:
        print(f"batch_pipeline: {error.code().name}: {error.details()}", file=sys.stderr)
        return 2
    if state in ("BATCH_STATE_COMPLETED", "BATCH_STATE_CANCELLED"):
        # Run again after the batch ended: its webhook was called then; what it said is in the batch itself.
        done.set()
        listener.join()
        c = created.batch.counts
        counts = {"succeeded": c.succeeded, "failed": c.failed, "cancelled": c.cancelled}
        kind = "batch.cancelled" if state == "BATCH_STATE_CANCELLED" else ("batch.failed" if c.succeeded == 0 and c.failed > 0 else "batch.completed")
        event = {"type": kind, "data": {"id": batch_id, "counts": counts}}
    else:
        listener.join()
        event = result.get("event")
    if event is None:
        print(f"batch_pipeline: no webhook for batch {batch_id} within {args.timeout:.0f} s", file=sys.stderr)
        return 2
    size = download(args.http, batch_id, args.out, args.token)
    print(f"batch_pipeline: {event['type']} ({event['data']['counts']}); {size} bytes of results in {args.out}", file=sys.stderr)
    return 0 if event["type"] == "batch.completed" else 1


if __name__ == "__main__":
    sys.exit(main())
