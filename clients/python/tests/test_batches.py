import asyncio
import json
import os
import tempfile
import threading
import unittest
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import attr_rag
from attr_rag import Client
from gateway import ADDRESS, HTTP, QUESTION, TOKEN, WEBHOOK_SECRET, needs_gateway

QUESTIONS = [QUESTION, "How do I collect oxygen gas over water?", "What is the melting point of aspirin?",
             "How is a titration endpoint detected?", "Why recrystallise a crude product?"]


class Receiver:
    """A webhook receiver on a free loopback port that keeps every request it gets, raw."""

    def __init__(self):
        self.requests = []
        self.arrived = threading.Event()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("content-length", "0")))
                outer.requests.append((dict(self.headers.items()), body))
                self.send_response(204)
                self.end_headers()
                outer.arrived.set()

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/hook"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self):
        self.server.shutdown()
        self.server.server_close()


@needs_gateway
class BatchTest(unittest.TestCase):
    def setUp(self):
        self.work = Path(tempfile.mkdtemp(prefix="attr-rag-py-"))
        self.receiver = Receiver()

    def tearDown(self):
        self.receiver.close()

    def test_openai_file_batch_is_waited_on_verified_and_downloaded_with_a_resume(self):
        file = self.work / "nightly.jsonl"
        lines = [{"custom_id": f"n-{i}", "method": "POST", "url": "/v1/ask", "body": {"question": q, "k": 3, "max_tokens": 4}}
                 for i, q in enumerate(QUESTIONS)]
        file.write_text("".join(json.dumps(line) + "\n" for line in lines))
        progress = []
        with Client(ADDRESS, token=TOKEN, http=HTTP) as client:
            batch = client.batches.create(file=file, label="nightly", webhook_url=self.receiver.url)
            self.assertTrue(batch.created)
            self.assertEqual(batch.total_items, 5)
            again = client.batches.create(file=file, label="nightly", webhook_url=self.receiver.url)
            self.assertEqual((again.batch_id, again.created), (batch.batch_id, False))  # the same batch, not a second

            ended = client.batches.wait(batch.batch_id, on_progress=progress.append)
            self.assertEqual(ended.state, "completed")
            self.assertEqual(ended.counts["succeeded"], 5)
            self.assertEqual(progress[-1].finished_items, 5)
            self.assertTrue(all(a.finished_items <= b.finished_items for a, b in zip(progress, progress[1:])))

            # Results over gRPC, from an offset: what a reader that already had two reads next.
            every = list(client.batches.results(batch.batch_id))
            self.assertEqual(sorted(r.item_id for r in every), [f"n-{i}" for i in range(5)])
            self.assertTrue(all(r.ok and r.status == "OK" and r.final_answer is not None for r in every))
            self.assertEqual([r.item_id for r in client.batches.results(batch.batch_id, offset=2)], [r.item_id for r in every[2:]])

            # The results file over HTTP; then cut in the middle of a line and downloaded again: resumed, same bytes.
            out = self.work / "results.jsonl"
            whole = client.batches.download(batch.batch_id, out, format="openai")
            self.assertEqual((whole.resumed_from, whole.batch_state, whole.results), (0, "ended", 5))
            full = out.read_bytes()
            rows = [json.loads(line) for line in full.decode().splitlines()]
            self.assertEqual(sorted(r["custom_id"] for r in rows), [f"n-{i}" for i in range(5)])
            self.assertTrue(all(r["response"]["status_code"] == 200 for r in rows))
            cut = len(full) // 2
            out.write_bytes(full[:cut])
            resumed = client.batches.download(batch.batch_id, out, format="openai")
            self.assertEqual(resumed.resumed_from, cut)
            self.assertEqual(out.read_bytes(), full)
            # Nothing new since: a third download changes nothing.
            self.assertEqual(client.batches.download(batch.batch_id, out, format="openai").size, len(full))

        # The webhook: the genuine delivery verifies; the same request forged in three ways does not.
        self.assertTrue(self.receiver.arrived.wait(60), "no webhook delivery")
        headers, body = self.receiver.requests[0]
        event = attr_rag.verify_webhook(headers, body, WEBHOOK_SECRET)
        self.assertEqual((event["type"], event["data"]["id"]), ("batch.completed", batch.batch_id))
        forged_body = body.replace(b"completed", b"cancelled")
        with self.assertRaisesRegex(attr_rag.WebhookVerificationError, "no webhook-signature matches"):
            attr_rag.verify_webhook(headers, forged_body, WEBHOOK_SECRET)
        other_secret = "whsec_" + "QUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVo0NTY3ODk="
        with self.assertRaises(attr_rag.WebhookVerificationError):
            attr_rag.verify_webhook(headers, body, other_secret)
        lower = {k.lower(): v for k, v in headers.items()}
        replayed = dict(lower, **{"webhook-timestamp": str(int(lower["webhook-timestamp"]) - 3600)})
        replayed["webhook-signature"] = attr_rag.sign_webhook(WEBHOOK_SECRET, lower["webhook-id"], replayed["webhook-timestamp"], body)
        with self.assertRaisesRegex(attr_rag.WebhookVerificationError, "replay"):
            attr_rag.verify_webhook(replayed, body, WEBHOOK_SECRET)

    def test_rows_batch_with_a_failing_item_cancel_and_list(self):
        rows = [{"id": "ok", "question": QUESTION, "k": 3, "max_tokens": 4}, {"id": "empty", "question": " "}]
        with Client(ADDRESS, token=TOKEN) as client:
            batch = client.batches.create(rows=rows, batch_id=f"py-rows-{os.getpid()}")
            ended = client.batches.wait(batch.batch_id)
            self.assertEqual((ended.counts["succeeded"], ended.counts["failed"]), (1, 1))
            failed = [r for r in client.batches.results(batch.batch_id) if not r.ok]
            self.assertEqual([(r.item_id, r.status, r.status_message) for r in failed], [("empty", "INVALID_ARGUMENT", "question is empty")])
            # Cancelling an ended batch returns it unchanged; cancelling a running one stops it.
            self.assertEqual(client.batches.cancel(batch.batch_id).state, "completed")
            long_rows = [{"id": f"q{i}", "question": QUESTION, "max_tokens": 64} for i in range(6)]
            running = client.batches.create(rows=long_rows, batch_id=f"py-cancel-{os.getpid()}")
            self.assertIn(client.batches.cancel(running.batch_id).state, ("cancelling", "cancelled"))
            self.assertEqual(client.batches.wait(running.batch_id).state, "cancelled")
            ids = [b.batch_id for b in client.batches.list(page_size=1)]  # one per page: the paging is exercised
            self.assertLess(ids.index(running.batch_id), ids.index(batch.batch_id))  # newest first
            with self.assertRaises(attr_rag.NotFoundError):
                client.batches.retrieve("no-such-batch")

    def test_asyncio_batches_create_wait_read_and_download(self):
        rows = [{"id": "a", "question": QUESTION, "k": 3, "max_tokens": 4}]
        out = self.work / "async.jsonl"

        async def run():
            async with attr_rag.AsyncClient(ADDRESS, token=TOKEN, http=HTTP) as client:
                batch = await client.batches.create(rows=rows, batch_id=f"py-async-{os.getpid()}")
                progress = []
                ended = await client.batches.wait(batch.batch_id, on_progress=progress.append)
                results = [r async for r in client.batches.results(batch.batch_id)]
                listed = [b.batch_id async for b in client.batches.list()]
                download = await client.batches.download(batch.batch_id, out)
                return batch, ended, progress, results, listed, download

        batch, ended, progress, results, listed, download = asyncio.run(run())
        self.assertTrue(batch.created)
        self.assertEqual((ended.state, ended.counts["succeeded"]), ("completed", 1))
        self.assertEqual(progress[-1].state, "completed")
        self.assertEqual([(r.item_id, r.ok) for r in results], [("a", True)])
        self.assertIn(batch.batch_id, listed)
        self.assertEqual((download.results, json.loads(out.read_text())["id"]), (1, "a"))

    def test_a_bad_row_names_its_line_and_nothing_is_sent(self):
        file = self.work / "bad.jsonl"
        file.write_text('{"id": "a", "question": "q"}\n{"id": "b", "question": "q", "k": 0}\n')
        with Client(ADDRESS, token=TOKEN) as client:
            with self.assertRaisesRegex(ValueError, r"bad\.jsonl:2: k must be an integer >= 1; got 0"):
                client.batches.create(file=file)
            with self.assertRaisesRegex(ValueError, r"row 1: unknown option 'colour'"):
                client.batches.create(rows=[{"id": "a", "question": "q", "colour": "red"}])


if __name__ == "__main__":
    unittest.main()
