#!/usr/bin/env python3
"""Ask the Attr-RAG gateway a question and print its streamed pipeline events.

    python ask_client.py --address localhost:50051 --question "Who ...?"
    /usr/bin/python3 ask_client.py --reflect --address localhost:50051 --question "..."

By default it uses the attr_rag package (clients/python: install it as its README says and run with that
environment's python). With --reflect it needs neither the package nor any .proto file, only Debian's
python3-grpcio: it builds the API from the server's gRPC reflection (reflected_api.py), as grpcurl does.
Exit codes: 0 done, 1 setup problem or stream ended without `done`, 2 gRPC error (and bad flags,
as argparse does), 130 interrupted.
"""
import argparse
import json
import os
import signal
import sys
from pathlib import Path

try:
    import grpc
    from google.protobuf import json_format
except ImportError as error:
    sys.exit(f"ask_client: {error}\nrun with Debian's python (apt-get install -y python3-grpcio) or the attr_rag "
             "environment's (clients/python/README.md)")
from reflected_api import ReflectedApi, ReflectionError  # noqa: E402 -- needs protobuf, checked above


class PackageApi:
    """The attr_rag package's client, shaped like the reflected API so one printer serves both."""

    def __init__(self, args):
        try:
            import attr_rag
            from attr_rag.v1 import attribution_pb2, engine_pb2, pipeline_pb2, retrieval_pb2
        except ImportError as error:
            sys.exit(f"ask_client: {error}: install the attr_rag package (clients/python/README.md) and run with "
                     "that environment's python, or use --reflect")
        self.attr_rag = attr_rag
        self.client = attr_rag.Client(args.address, token=args.token, tls_ca=args.tls_ca)
        self.FinishReason, self.RetrievalMode = engine_pb2.FinishReason, retrieval_pb2.RetrievalMode
        self.AttributionMethod, self.Baseline = attribution_pb2.AttributionMethod, pipeline_pb2.Baseline
        self.errors = (attr_rag.RpcError,)

    def stream(self, args):
        options = {"k": args.k, "max_tokens": args.max_tokens, "baseline": args.baseline}
        call = self.client.ask_stream(args.question, timeout=args.timeout, **options)
        return call, (event.message for event in call)

    def error_text(self, error):
        return f"{error.code.name}: {error.details}"

    def close(self):
        self.client.close()


class ReflectedApiClient:
    """The same, built from the server's reflection (no package, no generated code)."""

    def __init__(self, args):
        self.channel = open_channel(args)
        api = ReflectedApi(self.channel, timeout=args.timeout)
        self.AskRequest, self.ask = api.method("attr_rag.v1.AttrRagService", "Ask")
        self.Baseline, self.FinishReason = api.enum("attr_rag.v1.Baseline"), api.enum("attr_rag.v1.FinishReason")
        self.RetrievalMode = api.enum("attr_rag.v1.RetrievalMode")
        self.AttributionMethod = api.enum("attr_rag.v1.AttributionMethod")
        self.errors = (grpc.RpcError,)

    def stream(self, args):
        metadata = [("authorization", f"Bearer {args.token}")] if args.token else []
        call = self.ask(build_request(self, args), metadata=metadata, timeout=args.timeout)
        return call, (response.event for response in call)

    def error_text(self, error):
        return f"{error.code().name}: {error.details()}"

    def close(self):
        self.channel.close()


def positive_int(text):
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def parse_args():
    p = argparse.ArgumentParser(description="Stream an Attr-RAG answer from AttrRagService.Ask.")
    p.add_argument("--address", required=True, help="gateway HOST:PORT")
    p.add_argument("--question", required=True, help="the question")
    p.add_argument("--k", type=positive_int, help="chunks to retrieve (server default 30)")
    p.add_argument("--max-tokens", type=positive_int, help="max new tokens per answer (server default 512)")
    p.add_argument("--baseline", choices=["none", "topk", "rerank"],
                   help="Attr-RAG (none, the default) or a Table I baseline")
    p.add_argument("--token", default=os.environ.get("ATTR_RAG_TOKEN"),
                   help="bearer token sent as 'authorization: Bearer TOKEN' (default: $ATTR_RAG_TOKEN)")
    p.add_argument("--tls-ca", metavar="FILE", help="use TLS, trusting this PEM root certificate")
    p.add_argument("--timeout", type=float, metavar="SECONDS", help="deadline for the whole call")
    p.add_argument("--json", action="store_true", help="print one JSON object per event per line")
    p.add_argument("--reflect", action="store_true",
                   help="build the API from the server's gRPC reflection instead of the attr_rag package")
    return p.parse_args()


def build_request(api, args):
    # Only set what the user gave: unset fields mean "server default" (see the protos' comments).
    request = api.AskRequest(question=args.question)
    if args.k is not None:
        request.retrieval.k = args.k
    if args.max_tokens is not None:
        request.generation.max_tokens = args.max_tokens
    if args.baseline:
        request.baseline.baseline = api.Baseline.Value("BASELINE_" + args.baseline.upper())
    return request


def open_channel(args):
    if args.tls_ca:
        root = Path(args.tls_ca).read_bytes()  # OSError: reported as a setup problem
        return grpc.secure_channel(args.address, grpc.ssl_channel_credentials(root_certificates=root))
    return grpc.insecure_channel(args.address)


def enum_name(enum, number, prefix):
    """RETRIEVAL_MODE_DENSE -> DENSE; numbers unknown to these stubs print as numbers."""
    try:
        return enum.Name(number).removeprefix(prefix)
    except ValueError:
        return str(number)


def utf16_slice(text, start, end):
    # Citation offsets count UTF-16 code units (JavaScript string indices), not Python code points.
    return text.encode("utf-16-le")[2 * start:2 * end].decode("utf-16-le", errors="replace")


def short(text, limit=60):
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


class Printer:
    """Human-readable output: one line per stage, answer deltas streamed as they arrive."""

    def __init__(self, api):
        self.api = api
        self.streaming = None  # which answer is mid-line ("initial answer" / "final answer"), if any
        self.final_text = ""  # concatenated final deltas, to avoid printing the answer twice

    def end_line(self):
        if self.streaming:
            print()
            self.streaming = None

    def delta(self, label, delta):
        if self.streaming != label:
            self.end_line()
            print(f"{label}: ", end="")
            self.streaming = label
        print(delta.text, end="", flush=True)
        if delta.finish_reason:  # only the last delta of an answer says why it stopped
            reason = enum_name(self.api.FinishReason, delta.finish_reason, "FINISH_REASON_")
            print(f"  [{reason}]" if reason != "STOP" else "")
            self.streaming = None

    def event(self, event):
        stage = event.WhichOneof("stage")
        value = getattr(event, stage) if stage else None
        if stage == "initial_answer_delta":
            return self.delta("initial answer", value)
        if stage == "final_answer_delta":
            self.final_text += value.text
            return self.delta("final answer", value)
        self.end_line()
        if stage == "retrieved":
            how = enum_name(self.api.RetrievalMode, value.mode, "RETRIEVAL_MODE_")
            if value.embedder:
                how += f", {value.embedder}"
            print(f"retrieved: {len(value.chunks)} chunks ({how})")
        elif stage == "aligned":
            print(f"aligned: {len(value.sets)} sets")
        elif stage == "reranked":
            print(f"reranked: {len(value.sets)} sets (reranker {value.reranker})")
        elif stage == "occlusion_progress":
            print(f"occlusion: {value.done}/{value.total} done")
        elif stage == "attribution":
            method = enum_name(self.api.AttributionMethod, value.method, "ATTRIBUTION_METHOD_")
            print(f"attribution: {len(value.rows)} sets x {len(value.metrics)} metrics "
                  f"({method}, {value.evaluations} evaluations)")
        elif stage == "selection":
            print(f"selection: kept [{', '.join(value.selected_set_ids)}] of {len(value.sets)} sets")
            for s in value.sets:
                print(f"  {s.set_id}: {s.reason_text}")
            if value.summary:
                print(f"  summary: {value.summary}")
        elif stage == "gap_fill":
            added = sum(len(g.added_chunk_ids) for g in value.gaps)
            print(f"gap fill: {len(value.gaps)} gaps, {added} chunks added")
        elif stage == "final_answer":
            if value.text != self.final_text:  # deltas missing or incomplete: show the whole answer
                print(f"final answer: {value.text}")
            print(f"citations: {len(value.citations)} (context: {len(value.context_chunk_ids)} chunks)")
            for c in value.citations:
                span = short(utf16_slice(value.text, c.start, c.end))
                print(f"  [{c.start}-{c.end}] \"{span}\" -> {', '.join(c.chunk_ids)}")
        elif stage == "done":
            print(f"done: total {value.timings.total_ms:.0f} ms")
            for warning in value.warnings:
                print(f"  warning: {warning}")
        else:  # a stage newer than these stubs, or none
            print(f"{stage or 'event without stage'}")
        sys.stdout.flush()


def print_json(event):
    # "stage" first, then the event exactly as protobuf's JSON mapping gives it (proto field names;
    # proto3 defaults such as sequence 0 or empty lists are omitted by that mapping).
    body = json_format.MessageToDict(event, preserving_proto_field_name=True)
    print(json.dumps({"stage": event.WhichOneof("stage"), **body}), flush=True)


def main():
    args = parse_args()
    # `--json | head` should just stop, not print a BrokenPipeError traceback; the closed connection
    # cancels the call on the server.
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    try:
        api = ReflectedApiClient(args) if args.reflect else PackageApi(args)
    except (OSError, ValueError) as error:
        sys.exit(f"ask_client: {error}")
    except grpc.RpcError as error:
        print(f"error: server reflection: {error.code().name}: {error.details()}", file=sys.stderr)
        return 2
    except ReflectionError as error:
        print(f"error: server reflection: {error}", file=sys.stderr)
        return 2
    printer = Printer(api)
    done = False
    try:
        call, events = api.stream(args)
        for event in events:
            done = event.WhichOneof("stage") == "done"
            if args.json:
                print_json(event)
            else:
                printer.event(event)
    except api.errors as error:
        printer.end_line()
        print(f"error: {api.error_text(error)}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        # Cancel explicitly so the server stops its engine jobs now (Ask is cancellable end to end).
        call.cancel()
        printer.end_line()
        print("interrupted: call cancelled", file=sys.stderr)
        return 130
    finally:
        api.close()
    if not done:
        print("ask_client: stream ended without a done event", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
