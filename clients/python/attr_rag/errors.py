"""Errors as exceptions: one class per gRPC status the gateway returns, each carrying the server's message.

`except attr_rag.InvalidArgumentError as e` reads better than comparing status codes, and `e.details` is the
gateway's own sentence about what was wrong (`e.code` keeps the grpc.StatusCode for generic handling).
"""
import grpc


class AttrRagError(Exception):
    """Base of every error this package raises for a failed call."""


class RpcError(AttrRagError):
    """A call ended with a gRPC status other than OK."""

    #: The status this class stands for (subclasses set it).
    status = grpc.StatusCode.UNKNOWN
    #: What to do about it, appended to the message when the server's words do not already say it.
    hint = ""

    def __init__(self, code, details, attempts=1):
        self.code = code
        self.details = details or ""
        self.attempts = attempts
        text = f"{code.name}: {self.details}" if self.details else code.name
        if attempts > 1:
            text += f" (after {attempts} attempts)"
        if self.hint:
            text += f"; {self.hint}"
        super().__init__(text)


class InvalidArgumentError(RpcError):
    status = grpc.StatusCode.INVALID_ARGUMENT


class UnauthenticatedError(RpcError):
    status = grpc.StatusCode.UNAUTHENTICATED
    hint = "pass token= (or set ATTR_RAG_TOKEN) with the gateway's bearer token"


class PermissionDeniedError(RpcError):
    status = grpc.StatusCode.PERMISSION_DENIED


class NotFoundError(RpcError):
    status = grpc.StatusCode.NOT_FOUND


class AlreadyExistsError(RpcError):
    status = grpc.StatusCode.ALREADY_EXISTS


class FailedPreconditionError(RpcError):
    status = grpc.StatusCode.FAILED_PRECONDITION


class ResourceExhaustedError(RpcError):
    status = grpc.StatusCode.RESOURCE_EXHAUSTED
    hint = "the gateway is busy: retry later or allow more attempts (retry=RetryPolicy(max_attempts=...))"


class UnavailableError(RpcError):
    status = grpc.StatusCode.UNAVAILABLE
    hint = "is the gateway running at that address, and does tls_ca= match how it serves (TLS or plaintext)?"


class DeadlineExceededError(RpcError):
    status = grpc.StatusCode.DEADLINE_EXCEEDED


class CancelledError(RpcError):
    status = grpc.StatusCode.CANCELLED


class UnimplementedError(RpcError):
    status = grpc.StatusCode.UNIMPLEMENTED


class InternalError(RpcError):
    status = grpc.StatusCode.INTERNAL


_BY_CODE = {cls.status: cls for cls in RpcError.__subclasses__()}


def error_for(code, details, attempts=1):
    """The exception for a status code and the server's message."""
    return _BY_CODE.get(code, RpcError)(code, details, attempts)


def from_rpc_error(error, attempts=1):
    """A grpc.RpcError (or grpc.aio.AioRpcError) as this package's exception."""
    return error_for(error.code(), error.details(), attempts)


class HttpError(AttrRagError):
    """The gateway's HTTP port answered a download with an error status."""

    def __init__(self, status, url, body):
        self.status = status
        self.url = url
        self.body = body
        super().__init__(f"HTTP {status} from {url}: {body.strip()[:300]}")


class WebhookVerificationError(AttrRagError, ValueError):
    """A webhook request is not a genuine, recent delivery signed with the shared secret: refuse it (401)."""
