#!/usr/bin/env python3
"""A lab pipeline's nightly batch, end to end: submit an OpenAI Batch file, be called back when it ends, check
the call is really from the gateway, download the results with resume.

    ATTR_RAG_WEBHOOK_SECRET=whsec_... python batch_pipeline.py \\
        --address gateway:50051 --http http://gateway:8080 --file nightly.jsonl --out results.jsonl \\
        --listen 0.0.0.0:9000 --webhook-url http://pipeline-host:9000/attr-rag

Uses the attr_rag package (clients/python). --file holds OpenAI Batch input lines, {"custom_id", "method":
"POST", "url": "/v1/ask", "body": {"question", and optionally "k", "max_tokens", "mode", "baseline"}}. The batch
is created with --webhook-url; this script listens on --listen for the gateway's POST, checks it with
attr_rag.verify_webhook (Standard Webhooks signature under $ATTR_RAG_WEBHOOK_SECRET, recent timestamp), then
downloads the results (OpenAI Batch output lines) into --out, resuming a partial file with HTTP Range.
Exit codes: 0 the batch completed, 1 it ended otherwise, 2 bad input or an error.
"""
import argparse
import os
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import attr_rag


def parse_args():
    p = argparse.ArgumentParser(description="Submit an OpenAI Batch file, wait for the webhook, download the results.")
    p.add_argument("--address", required=True, help="gateway gRPC HOST:PORT")
    p.add_argument("--http", required=True, help="gateway HTTP base URL (serve --http-port)")
    p.add_argument("--file", required=True, type=Path, help="OpenAI Batch input lines")
    p.add_argument("--out", required=True, type=Path, help="results (OpenAI Batch output lines), resumed")
    p.add_argument("--listen", required=True, help="HOST:PORT to receive the webhook on")
    p.add_argument("--webhook-url", required=True, help="the URL the gateway calls (reaching --listen)")
    p.add_argument("--id", help="batch id (default: a digest of the items, so the same command finds the same batch)")
    p.add_argument("--token", help="bearer token (default: $ATTR_RAG_TOKEN)")
    p.add_argument("--tls-ca", metavar="FILE", help="use TLS for gRPC, trusting this PEM root certificate")
    p.add_argument("--timeout", type=float, default=3600, help="seconds to wait for the webhook")
    return p.parse_args()


def listen_for(listen, secret, batch_id, arrived):
    """Serves --listen; a verified event for this batch is put in `arrived` (a dict) and ends the wait."""
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self):
            body = self.rfile.read(int(self.headers.get("content-length", "0")))
            try:
                event = attr_rag.verify_webhook(self.headers, body, secret)
            except attr_rag.WebhookVerificationError as error:
                print(f"batch_pipeline: refused a webhook call: {error}", file=sys.stderr)
                self.send_response(401)
                self.end_headers()
                return
            self.send_response(204)  # 2xx: the gateway stops retrying
            self.end_headers()
            if event.get("data", {}).get("id") == batch_id:
                arrived.setdefault("event", event)
                arrived["done"].set()

        def log_message(self, *args):
            pass

    host, port = listen.rsplit(":", 1)
    server = ThreadingHTTPServer((host, int(port)), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def main():
    args = parse_args()
    secret = os.environ.get("ATTR_RAG_WEBHOOK_SECRET")
    if not secret:
        print("batch_pipeline: set ATTR_RAG_WEBHOOK_SECRET (the gateway's webhook signing secret)", file=sys.stderr)
        return 2
    with attr_rag.Client(args.address, token=args.token, tls_ca=args.tls_ca, http=args.http) as client:
        try:
            items = attr_rag.requests.items_from_file(args.file)
        except (OSError, ValueError) as error:
            print(f"batch_pipeline: {error}; nothing was submitted", file=sys.stderr)
            return 2
        batch_id = args.id or attr_rag.requests.default_batch_id(items)
        # Listen before submitting: a small batch can end before a late listener is up (the gateway would retry).
        arrived = {"done": threading.Event()}
        server = listen_for(args.listen, secret, batch_id, arrived)
        try:
            batch = client.batches.create(file=args.file, batch_id=batch_id, label=args.file.name, webhook_url=args.webhook_url)
            print(f"batch_pipeline: {'submitted' if batch.created else 'already submitted'} {batch_id} ({batch.total_items} items); "
                  "waiting for the webhook", file=sys.stderr)
            if batch.ended:  # run again after the batch ended: its webhook was called then; the batch says how it went
                kind = "batch.cancelled" if batch.state == "cancelled" else ("batch.failed" if batch.counts["succeeded"] == 0 else "batch.completed")
                arrived["event"] = {"type": kind, "data": {"id": batch_id, "counts": batch.counts}}
            elif not arrived["done"].wait(args.timeout):
                print(f"batch_pipeline: no webhook for batch {batch_id} within {args.timeout:.0f} s", file=sys.stderr)
                return 2
            event = arrived["event"]
            download = client.batches.download(batch_id, args.out, format="openai")
        except (attr_rag.RpcError, attr_rag.HttpError) as error:
            print(f"batch_pipeline: {error}", file=sys.stderr)
            return 2
        finally:
            server.shutdown()
    counts = {k: v for k, v in event["data"]["counts"].items() if k in ("succeeded", "failed", "cancelled")}
    print(f"batch_pipeline: {event['type']} ({counts}); {download.size} bytes of results in {args.out}"
          f"{f' (resumed at byte {download.resumed_from})' if download.resumed_from else ''}", file=sys.stderr)
    return 0 if event["type"] == "batch.completed" else 1


if __name__ == "__main__":
    sys.exit(main())
