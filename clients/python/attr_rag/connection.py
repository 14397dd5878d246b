"""Channels and call metadata: plaintext or TLS, and the bearer token the gateway expects on every call."""
import os
from pathlib import Path

import grpc


def _root_certificates(tls_ca):
    """tls_ca: a path to a PEM file or the PEM bytes themselves; True: the system's trusted roots."""
    if tls_ca is True:
        return None
    if isinstance(tls_ca, (bytes, bytearray)):
        return bytes(tls_ca)
    try:
        return Path(tls_ca).read_bytes()
    except OSError as error:
        raise ValueError(f"cannot read the TLS root certificate tls_ca={str(tls_ca)!r}: {error.strerror}") from None


def open_channel(address, tls_ca=None, aio=False, options=()):
    if not isinstance(address, str) or ":" not in address:
        raise ValueError(f"address must be HOST:PORT of the gateway's gRPC port; got {address!r}")
    module = grpc.aio if aio else grpc
    if tls_ca:
        credentials = grpc.ssl_channel_credentials(root_certificates=_root_certificates(tls_ca))
        return module.secure_channel(address, credentials, options=list(options))
    return module.insecure_channel(address, options=list(options))


def resolve_token(token):
    """The token given, else $ATTR_RAG_TOKEN (which keeps it out of code and the process list), else None."""
    return token if token is not None else os.environ.get("ATTR_RAG_TOKEN") or None


def auth_metadata(token):
    return (("authorization", f"Bearer {token}"),) if token else ()
