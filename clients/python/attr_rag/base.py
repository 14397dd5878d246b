"""What Client and AsyncClient share: the connection settings, the channel and its stubs, and the retry hook.
They differ only in how a call is awaited and how a backoff is slept."""
from .connection import auth_metadata, open_channel, resolve_token
from .retry import RetryPolicy
from .v1 import attr_rag_service_pb2_grpc, batch_service_pb2_grpc


class ClientBase:
    def __init__(self, address, token, tls_ca, http, retry, on_retry, channel_options, aio):
        self.address = address
        self.http = http
        self.tls_ca = tls_ca
        self.retry = retry or RetryPolicy()
        self.on_retry = on_retry
        self._token = resolve_token(token)
        self._metadata = auth_metadata(self._token)
        self._channel = open_channel(address, tls_ca, aio=aio, options=channel_options)
        self._ask = attr_rag_service_pb2_grpc.AttrRagServiceStub(self._channel)
        self._batch_stub = batch_service_pb2_grpc.BatchServiceStub(self._channel)

    def _backoff(self, method, attempt, error):
        """The wait before the next attempt, after telling on_retry; `error` is this package's exception."""
        wait = self.retry.backoff(attempt)
        if self.on_retry:
            self.on_retry(method, attempt, error, wait)
        return wait
