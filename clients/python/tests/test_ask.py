import asyncio
import contextlib
import threading
import unittest

import attr_rag
from attr_rag import AsyncClient, Client, RetryPolicy
from gateway import ADDRESS, QUESTION, SMALL, TOKEN, needs_gateway

ORDER = ["retrieved", "aligned", "reranked", "initial_answer_delta", "occlusion_progress", "attribution", "selection",
         "gap_fill", "final_answer_delta", "final_answer", "done"]


def comparable(result):
    """An AskResult without what differs between two runs of the same Ask (request id, timings)."""
    return {
        "initial": result.initial_answer, "final": result.final_answer.text, "sets": [s.set_id for s in result.sets],
        "citations": [(c.start, c.end, c.chunk_ids) for c in result.final_answer.citations],
        "alpha": [(r.set_id, r.alpha) for r in result.attribution.rows],
        "selection": [(d.set_id, d.kept, d.reason, d.votes) for d in result.selection.sets],
    }


@needs_gateway
class AskTest(unittest.TestCase):
    def test_streamed_ask_has_every_stage_in_order_and_a_typed_result(self):
        with Client(ADDRESS, token=TOKEN) as client:
            stages = []
            result = client.ask(QUESTION, on_event=lambda e: stages.append(e.stage), **SMALL)
        collapsed = [s for i, s in enumerate(stages) if i == 0 or stages[i - 1] != s]
        self.assertEqual(collapsed, ORDER)
        self.assertEqual({e.request_id for e in result.events}, {result.request_id})
        self.assertEqual(len(result.retrieved), SMALL["k"])
        self.assertIsInstance(result.retrieved[0], attr_rag.ScoredChunk)
        set_ids = [s.set_id for s in result.sets]
        self.assertGreater(len(set_ids), 0)
        # The α table: one row per aligned set (in re-ranked order), one α per metric (the paper's six by default).
        self.assertEqual([r.set_id for r in result.attribution.rows], [r.set_id for r in result.reranked])
        self.assertEqual(sorted(r.set_id for r in result.attribution.rows), sorted(set_ids))
        self.assertEqual(result.attribution.method, "occlusion")
        self.assertEqual(len(result.attribution.metrics), 6)
        self.assertEqual(set(result.attribution.rows[0].alpha), set(result.attribution.metrics))
        # The selection keeps a subset of those sets and explains every one.
        self.assertTrue(set(result.selection.selected_set_ids) <= set(set_ids))
        self.assertEqual(sorted(d.set_id for d in result.selection.sets), sorted(set_ids))
        self.assertEqual([d.set_id for d in result.selection.sets if d.kept], result.selection.selected_set_ids)
        # The initial answer is the concatenated deltas; so is the final one, which the final event repeats whole.
        deltas = "".join(e.value.text for e in result.events if e.stage == "final_answer_delta")
        self.assertEqual(result.final_answer.text, deltas)
        self.assertGreater(len(result.initial_answer), 0)
        for c in result.final_answer.citations:
            self.assertEqual(c.text, attr_rag.types.utf16_slice(result.final_answer.text, c.start, c.end))
        self.assertGreater(result.done.timings["total_ms"], 0)

    def test_asyncio_client_gives_the_same_result(self):
        with Client(ADDRESS, token=TOKEN) as client:
            sync = client.ask(QUESTION, **SMALL)

        async def run():
            async with AsyncClient(ADDRESS, token=TOKEN) as client:
                stages = []
                return stages, await client.ask(QUESTION, on_event=lambda e: stages.append(e.stage), **SMALL)

        stages, result = asyncio.run(run())
        self.assertEqual(stages[0], "retrieved")
        self.assertEqual(stages[-1], "done")
        self.assertEqual(comparable(result), comparable(sync))

    def test_attribute_scores_the_sets_given(self):
        sets = ["Acetaminophen is made by acetylating 4-aminophenol with acetic anhydride.",
                "Oxygen can be collected over water in an inverted bottle.",
                {"set_id": "recryst", "text": "The crude product is recrystallised from hot water."}]
        with Client(ADDRESS, token=TOKEN) as client:
            result = client.attribute(QUESTION, sets, max_tokens=8, include_occluded_answers=True)
        self.assertEqual(len(result.attribution.rows), 3)
        self.assertEqual(result.attribution.rows[2].set_id, "recryst")
        self.assertGreater(len(result.initial_answer), 0)
        self.assertEqual(set(result.occluded_answers), {r.set_id for r in result.attribution.rows})
        self.assertTrue(set(result.selection.selected_set_ids) <= {r.set_id for r in result.attribution.rows})

    def test_wrong_token_raises_unauthenticated_with_the_servers_message(self):
        with Client(ADDRESS, token="not-the-token") as client:
            with self.assertRaises(attr_rag.UnauthenticatedError) as caught:
                client.ask(QUESTION, **SMALL)
        error = caught.exception
        self.assertIsInstance(error, attr_rag.RpcError)
        self.assertEqual(error.code.name, "UNAUTHENTICATED")
        self.assertGreater(len(error.details), 0)
        self.assertIn(error.details, str(error))
        self.assertIn("token", str(error))

    def test_bad_request_raises_invalid_argument_at_once(self):
        retries = []
        with Client(ADDRESS, token=TOKEN, on_retry=lambda *a: retries.append(a)) as client:
            with self.assertRaises(attr_rag.InvalidArgumentError) as caught:
                client.ask("   ", **SMALL)
        self.assertEqual(caught.exception.details, "question is empty")
        self.assertEqual(retries, [])  # not a transient status: never retried

    def test_retries_after_resource_exhausted_then_succeeds(self):
        # The gateway under test admits one Ask at a time and queues none (maxConcurrentAsks 1,
        # maxQueuedAsks 0): while one Ask runs, another is refused with RESOURCE_EXHAUSTED until it ends.
        retries = []
        policy = RetryPolicy(max_attempts=40, initial_backoff=0.05, max_backoff=0.5)
        with Client(ADDRESS, token=TOKEN, retry=policy, on_retry=lambda m, a, e, w: retries.append((m, a, type(e).__name__))) as client:
            with self._slot_taken():
                result = client.ask(QUESTION, **SMALL)
        self.assertGreaterEqual(len(retries), 1)
        self.assertEqual(retries[0], ("Ask", 1, "ResourceExhaustedError"))
        self.assertEqual(result.events[-1].stage, "done")
        # Without retries the same refusal is raised at once, as a typed exception with the server's message.
        with Client(ADDRESS, token=TOKEN, retry=attr_rag.NO_RETRY) as client:
            with self._slot_taken():
                with self.assertRaises(attr_rag.ResourceExhaustedError) as caught:
                    client.ask(QUESTION, **SMALL)
        self.assertIn("busy", caught.exception.details)

    @contextlib.contextmanager
    def _slot_taken(self):
        """Another Ask holds the gateway's one slot: its first event has arrived (it was admitted) and its
        generation and occlusion still run."""
        admitted = threading.Event()
        seen = []

        def hold():
            with Client(ADDRESS, token=TOKEN) as other:
                for event in other.ask_stream(QUESTION, k=4, max_tokens=24):
                    seen.append(event.stage)
                    admitted.set()

        holder = threading.Thread(target=hold)
        holder.start()
        try:
            self.assertTrue(admitted.wait(60), "the first Ask was never admitted")
            yield
        finally:
            holder.join(120)
        self.assertEqual(seen[-1], "done")


if __name__ == "__main__":
    unittest.main()
