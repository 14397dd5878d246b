"""client.batches: durable batches of Asks (create, retrieve, list, wait, results, download, cancel)."""
from .batch_types import Batch, BatchResult
from .download import download_results
from .errors import UnavailableError
from .requests import default_batch_id, items_from_file, items_from_rows
from .v1 import batch_service_pb2 as pb


def create_request(rows, file, batch_id, label, webhook_url):
    if (rows is None) == (file is None):
        raise ValueError("give either rows= (dicts: id, question, options) or file= (a JSON-lines file), not both")
    items = items_from_file(file) if file is not None else items_from_rows(rows)
    request = pb.CreateBatchRequest(batch_id=batch_id or default_batch_id(items), items=items, label=label or "")
    if webhook_url:
        request.webhook_url = webhook_url
    return request


def created_batch(response):
    batch = Batch.from_proto(response.batch)
    batch.created = response.created
    return batch


class Batches:
    def __init__(self, client, stub):
        self._client = client
        self._stub = stub

    def create(self, rows=None, file=None, batch_id=None, label="", webhook_url=None, timeout=None):
        """Creates a batch from rows or from a JSON-lines file (our rows and/or OpenAI Batch input lines).

        Every row is checked before anything is sent (a bad one raises ValueError naming it). The batch id
        defaults to a digest of the items, so a retried or repeated create finds the same batch
        (`.created` is False then) instead of submitting it twice."""
        request = create_request(rows, file, batch_id, label, webhook_url)
        return created_batch(self._client._unary("CreateBatch", self._stub.CreateBatch, request, timeout))

    def retrieve(self, batch_id, timeout=None):
        return Batch.from_proto(self._client._unary("GetBatch", self._stub.GetBatch, pb.GetBatchRequest(batch_id=batch_id), timeout).batch)

    def list(self, page_size=50):
        """Every batch, newest first, fetched a page at a time as you iterate."""
        token = ""
        while True:
            page = self._client._unary("ListBatches", self._stub.ListBatches, pb.ListBatchesRequest(page_size=page_size, page_token=token))
            yield from (Batch.from_proto(b) for b in page.batches)
            token = page.next_page_token
            if not token:
                return

    def cancel(self, batch_id, timeout=None):
        """Cancels the batch (idempotent); returns it CANCELLING, or unchanged if it had already ended."""
        return Batch.from_proto(self._client._unary("CancelBatch", self._stub.CancelBatch, pb.CancelBatchRequest(batch_id=batch_id), timeout).batch)

    def wait(self, batch_id, on_progress=None, timeout=None):
        """Watches the batch until it ends and returns it; on_progress(batch) sees every change. A dropped
        connection is watched again (the retry policy's waits), so a gateway restart does not end the wait."""
        attempt = 1
        while True:
            try:
                for response in self._client._stream("WatchBatch", self._stub.WatchBatch, pb.WatchBatchRequest(batch_id=batch_id), timeout, lambda r: r.batch):
                    batch = Batch.from_proto(response)
                    if on_progress:
                        on_progress(batch)
                    if batch.ended:
                        return batch
                return self.retrieve(batch_id)
            except UnavailableError as error:
                if attempt >= self._client.retry.max_attempts:
                    raise
                self._client._wait_before_retry("WatchBatch", attempt, error)
                attempt += 1

    def results(self, batch_id, offset=0, follow=False, timeout=None):
        """The batch's results as BatchResult objects in the order they finished, from `offset` (the number a
        reader already has). With follow, waits for more until the batch ends. A dropped stream resumes after
        the last result it delivered."""
        attempt = 1
        while True:
            try:
                request = pb.ListBatchResultsRequest(batch_id=batch_id, offset=offset, follow=follow)
                for response in self._client._stream("ListBatchResults", self._stub.ListBatchResults, request, timeout, lambda r: r.result):
                    result = BatchResult.from_proto(response)
                    offset = result.offset + 1
                    attempt = 1
                    yield result
                return
            except UnavailableError as error:
                if attempt >= self._client.retry.max_attempts:
                    raise
                self._client._wait_before_retry("ListBatchResults", attempt, error)
                attempt += 1

    def download(self, batch_id, path, format="rows"):
        """Downloads the results file over HTTP into `path`, resuming a partial file with a Range request;
        format "rows" (ours) or "openai" (OpenAI Batch output lines). Returns a Download."""
        c = self._client
        return download_results(c.http, batch_id, path, format, c._token, c.tls_ca)

