"""The asyncio client: the same calls as Client, awaited (grpc.aio), for pipelines already on an event loop."""
import asyncio

import grpc

from .batch_types import Batch, BatchResult
from .batches import create_request, created_batch
from .base import ClientBase
from .download import download_results
from .errors import from_rpc_error
from .requests import ask_request, attribute_request
from .types import AskEvent, AskResult, AttributeResult
from .v1 import batch_service_pb2 as pb


class AsyncClient(ClientBase):
    """Like Client (same arguments); use `async with AsyncClient(...) as client:` or await close()."""

    def __init__(self, address, token=None, tls_ca=None, http=None, retry=None, on_retry=None, channel_options=()):
        super().__init__(address, token, tls_ca, http, retry, on_retry, channel_options, aio=True)
        self.batches = AsyncBatches(self, self._batch_stub)

    async def __aenter__(self):
        return self

    async def __aexit__(self, *exc):
        await self.close()

    async def close(self):
        await self._channel.close()

    async def _wait_before_retry(self, method, attempt, error):
        await asyncio.sleep(self._backoff(method, attempt, error))

    async def _unary(self, method, call, request, timeout=None):
        attempt = 1
        while True:
            try:
                return await call(request, metadata=self._metadata, timeout=timeout)
            except grpc.RpcError as error:
                if not self.retry.retries(error.code(), attempt):
                    raise from_rpc_error(error, attempt) from None
                await self._wait_before_retry(method, attempt, from_rpc_error(error, attempt))
                attempt += 1

    async def _stream(self, method, call, request, timeout, convert):
        """Retried on the transient codes only until the first message reached the caller; closing the
        iterator (break, cancellation of the task) cancels the call and the server's work."""
        attempt = 1
        while True:
            current = call(request, metadata=self._metadata, timeout=timeout)
            started = False
            try:
                async for message in current:
                    started = True
                    yield convert(message)
                return
            except grpc.RpcError as error:
                if started or not self.retry.retries(error.code(), attempt):
                    raise from_rpc_error(error, attempt) from None
                await self._wait_before_retry(method, attempt, from_rpc_error(error, attempt))
                attempt += 1
            finally:
                if not current.done():
                    current.cancel()

    def ask_stream(self, question, timeout=None, **options):
        """An async iterator of AskEvent objects, as Client.ask_stream."""
        request = ask_request(question, **options)
        return self._stream("Ask", self._ask.Ask, request, timeout, lambda r: AskEvent.from_proto(r.event))

    async def ask(self, question, timeout=None, on_event=None, **options):
        result = AskResult()
        async for event in self.ask_stream(question, timeout=timeout, **options):
            result.add(event)
            if on_event:
                on_event(event)
        return result

    async def attribute(self, question, sets, initial_answer=None, timeout=None, **options):
        request = attribute_request(question, sets, initial_answer, **options)
        return AttributeResult.from_proto(await self._unary("Attribute", self._ask.Attribute, request, timeout))


class AsyncBatches:
    """client.batches for AsyncClient: the same methods as Batches, awaited."""

    def __init__(self, client, stub):
        self._client = client
        self._stub = stub

    async def create(self, rows=None, file=None, batch_id=None, label="", webhook_url=None, timeout=None):
        request = create_request(rows, file, batch_id, label, webhook_url)
        return created_batch(await self._client._unary("CreateBatch", self._stub.CreateBatch, request, timeout))

    async def retrieve(self, batch_id, timeout=None):
        response = await self._client._unary("GetBatch", self._stub.GetBatch, pb.GetBatchRequest(batch_id=batch_id), timeout)
        return Batch.from_proto(response.batch)

    async def list(self, page_size=50):
        token = ""
        while True:
            page = await self._client._unary("ListBatches", self._stub.ListBatches, pb.ListBatchesRequest(page_size=page_size, page_token=token))
            for b in page.batches:
                yield Batch.from_proto(b)
            token = page.next_page_token
            if not token:
                return

    async def cancel(self, batch_id, timeout=None):
        response = await self._client._unary("CancelBatch", self._stub.CancelBatch, pb.CancelBatchRequest(batch_id=batch_id), timeout)
        return Batch.from_proto(response.batch)

    async def wait(self, batch_id, on_progress=None, timeout=None):
        async for message in self._client._stream("WatchBatch", self._stub.WatchBatch, pb.WatchBatchRequest(batch_id=batch_id), timeout, lambda r: r.batch):
            batch = Batch.from_proto(message)
            if on_progress:
                on_progress(batch)
            if batch.ended:
                return batch
        return await self.retrieve(batch_id)

    async def results(self, batch_id, offset=0, follow=False, timeout=None):
        request = pb.ListBatchResultsRequest(batch_id=batch_id, offset=offset, follow=follow)
        async for message in self._client._stream("ListBatchResults", self._stub.ListBatchResults, request, timeout, lambda r: r.result):
            yield BatchResult.from_proto(message)

    async def download(self, batch_id, path, format="rows"):
        c = self._client
        # urllib blocks: run it beside the event loop.
        return await asyncio.to_thread(download_results, c.http, batch_id, path, format, c._token, c.tls_ca)
