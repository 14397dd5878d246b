"""The synchronous client: Ask (streamed or gathered), Attribute, and batches (client.batches)."""
import time

import grpc

from .base import ClientBase
from .batches import Batches
from .errors import from_rpc_error
from .requests import ask_request, attribute_request
from .types import AskEvent, AskResult, AttributeResult


class Client(ClientBase):
    """A connection to one gateway.

    address: its gRPC HOST:PORT. token: bearer token (default $ATTR_RAG_TOKEN). tls_ca: a PEM file (or bytes)
    to trust for TLS, True for the system's roots, None for plaintext. http: base URL of its HTTP port, for
    results downloads. retry: a RetryPolicy (UNAVAILABLE and RESOURCE_EXHAUSTED only). on_retry: called as
    on_retry(method, attempt, error, wait_s) before each retry, e.g. to log it.
    """

    def __init__(self, address, token=None, tls_ca=None, http=None, retry=None, on_retry=None, channel_options=()):
        super().__init__(address, token, tls_ca, http, retry, on_retry, channel_options, aio=False)
        self.batches = Batches(self, self._batch_stub)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def close(self):
        self._channel.close()

    def _wait_before_retry(self, method, attempt, error):
        time.sleep(self._backoff(method, attempt, error))

    def _unary(self, method, call, request, timeout=None):
        """One unary call, retried on the transient codes; any other failure raised as this package's error."""
        attempt = 1
        while True:
            try:
                return call(request, metadata=self._metadata, timeout=timeout)
            except grpc.RpcError as error:
                if not self.retry.retries(error.code(), attempt):
                    raise from_rpc_error(error, attempt) from None
                self._wait_before_retry(method, attempt, from_rpc_error(error, attempt))
                attempt += 1

    def _stream(self, method, call, request, timeout, convert):
        """A server stream, retried on the transient codes only until its first message has reached the caller."""
        return _RetriedStream(self, method, call, request, timeout, convert)

    def ask_stream(self, question, timeout=None, **options):
        """Streams the Ask's stages as AskEvent objects (see STAGES for the order); `.cancel()` stops the call
        and the server's engine jobs. Options: k, mode, max_tokens, baseline, method, ... (requests.OPTION_NAMES);
        timeout: seconds for the whole call."""
        request = ask_request(question, **options)
        return self._stream("Ask", self._ask.Ask, request, timeout, lambda r: AskEvent.from_proto(r.event))

    def ask(self, question, timeout=None, on_event=None, **options):
        """The whole Ask gathered into an AskResult; on_event(event) sees each stage as it arrives."""
        result = AskResult()
        for event in self.ask_stream(question, timeout=timeout, **options):
            result.add(event)
            if on_event:
                on_event(event)
        return result

    def attribute(self, question, sets, initial_answer=None, timeout=None, **options):
        """Attributes an answer to the context sets you give (strings or {"text", "set_id", "chunk_ids"}) and
        selects among them, without retrieval. With initial_answer, that text is A_full instead of a generated one."""
        request = attribute_request(question, sets, initial_answer, **options)
        return AttributeResult.from_proto(self._unary("Attribute", self._ask.Attribute, request, timeout))


class _RetriedStream:
    def __init__(self, client, method, call, request, timeout, convert):
        self._client, self._method, self._call, self._request = client, method, call, request
        self._timeout, self._convert = timeout, convert
        self._current = None
        self._cancelled = False

    def __iter__(self):
        attempt = 1
        while True:
            self._current = self._call(self._request, metadata=self._client._metadata, timeout=self._timeout)
            if self._cancelled:
                self._current.cancel()
            started = False
            try:
                for message in self._current:
                    started = True
                    yield self._convert(message)
                return
            except grpc.RpcError as error:
                if started or self._cancelled or not self._client.retry.retries(error.code(), attempt):
                    raise from_rpc_error(error, attempt) from None
                self._client._wait_before_retry(self._method, attempt, from_rpc_error(error, attempt))
                attempt += 1
            finally:
                if self._current is not None and not self._current.done():
                    self._current.cancel()  # the caller stopped iterating: stop the server's work too

    def cancel(self):
        self._cancelled = True
        if self._current is not None:
            self._current.cancel()
