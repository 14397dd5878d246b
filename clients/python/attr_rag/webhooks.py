"""Verifying the gateway's webhook calls (Standard Webhooks, https://www.standardwebhooks.com).

The gateway signs `<webhook-id>.<webhook-timestamp>.<body>` with HMAC-SHA256 under the shared secret
(`whsec_` + base64 key) and sends `v1,<base64 signature>` in webhook-signature (several, space-separated, while
a secret is rotated). A receiver must check the signature over the raw body bytes, and that the timestamp is
recent: an old, replayed delivery is refused even with a valid signature.
"""
import base64
import binascii
import hashlib
import hmac
import json
import time

from .errors import WebhookVerificationError

TOLERANCE_S = 300


def _key(secret):
    if not isinstance(secret, str) or not secret:
        raise WebhookVerificationError("no webhook secret given: pass the gateway's webhookSecret (whsec_...)")
    try:
        return base64.b64decode(secret.removeprefix("whsec_"), validate=True)
    except (binascii.Error, ValueError):
        raise WebhookVerificationError("the webhook secret is not whsec_ followed by base64") from None


def sign_webhook(secret, msg_id, timestamp, body):
    """The v1 signature of one delivery (what the gateway sends; useful to test a receiver)."""
    digest = hmac.new(_key(secret), f"{msg_id}.{timestamp}.".encode() + body, hashlib.sha256).digest()
    return "v1," + base64.b64encode(digest).decode()


def verify_webhook(headers, body, secret, tolerance=TOLERANCE_S, now=None):
    """Checks one delivery and returns its event (the parsed JSON body); raises WebhookVerificationError, whose
    message says what was wrong, when the request is not genuine or too old. `headers`: any mapping of the
    request's headers (names in any case); `body`: the raw bytes as received, before any JSON parsing."""
    lower = {str(k).lower(): v for k, v in dict(headers.items() if hasattr(headers, "items") else headers).items()}
    msg_id, stamp, signatures = lower.get("webhook-id"), lower.get("webhook-timestamp"), lower.get("webhook-signature")
    missing = [n for n, v in (("webhook-id", msg_id), ("webhook-timestamp", stamp), ("webhook-signature", signatures)) if not v]
    if missing:
        raise WebhookVerificationError(f"missing header {missing[0]}: not a signed webhook delivery")
    if isinstance(body, str):
        body = body.encode("utf-8")
    try:
        sent = int(stamp)
    except ValueError:
        raise WebhookVerificationError(f"webhook-timestamp {stamp!r} is not a Unix time in seconds") from None
    age = (time.time() if now is None else now) - sent
    if abs(age) > tolerance:
        raise WebhookVerificationError(f"webhook-timestamp is {abs(age):.0f} s from now (more than {tolerance} s): refused as a possible replay")
    expected = sign_webhook(secret, msg_id, stamp, body)
    if not any(hmac.compare_digest(candidate, expected) for candidate in signatures.split()):
        raise WebhookVerificationError("no webhook-signature matches: the body was changed or another secret signed it")
    try:
        return json.loads(body)
    except ValueError:
        raise WebhookVerificationError("the signed body is not JSON") from None
