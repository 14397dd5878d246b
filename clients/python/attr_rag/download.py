"""Batch results over the gateway's HTTP port, resumed with a Range request.

A batch's results file only grows at its end (results keep the order they finished and never change), so the
bytes already on disk are a prefix of the server's file: asking for `bytes=<size>-` and appending gives the same
file as one full download. 416 means nothing new yet; a 200 answer to a Range request (the server chose to send
everything) replaces the file instead of appending to it.
"""
import ssl
import urllib.error
import urllib.request
from pathlib import Path

from .batch_types import Download
from .errors import HttpError

FORMATS = ("rows", "openai")


def download_results(http, batch_id, path, fmt="rows", token=None, tls_ca=None, timeout=60):
    if not http:
        raise ValueError("downloading results needs the gateway's HTTP address: Client(..., http=\"http://host:8080\")")
    if fmt not in FORMATS:
        raise ValueError(f"format must be one of {', '.join(FORMATS)}; got {fmt!r}")
    path = Path(path)
    have = path.stat().st_size if path.exists() else 0
    url = f"{http.rstrip('/')}/v1/batches/{urllib.request.quote(batch_id, safe='')}/results.jsonl"
    if fmt == "openai":
        url += "?format=openai"
    request = urllib.request.Request(url)
    if token:
        request.add_header("Authorization", f"Bearer {token}")
    if have:
        request.add_header("Range", f"bytes={have}-")
    context = None
    if url.startswith("https:") and tls_ca:
        context = ssl.create_default_context(cafile=None if tls_ca is True else str(tls_ca))
    try:
        with urllib.request.urlopen(request, timeout=timeout, context=context) as response:
            resumed = have if response.status == 206 else 0
            with path.open("ab" if resumed else "wb") as out:
                while chunk := response.read(1 << 16):
                    out.write(chunk)
            state, results = response.headers.get("x-batch-state", ""), response.headers.get("x-batch-results", "0")
    except urllib.error.HTTPError as error:
        if error.code != 416:
            raise HttpError(error.code, url, error.read().decode("utf-8", "replace")) from None
        resumed = have  # the file already holds everything recorded so far
        state, results = error.headers.get("x-batch-state", ""), error.headers.get("x-batch-results", "0")
    except urllib.error.URLError as error:
        raise HttpError(0, url, f"cannot reach the gateway's HTTP port: {error.reason}") from None
    return Download(path, path.stat().st_size, resumed, state, int(results or 0))
