"""Hand-made OTLP/HTTP bodies for the OTLP attack tests: JSON spans and a minimal
protobuf encoder (the attacks need exact bytes: 8,000,000 empty values in 16 MB), with
no OpenTelemetry dependency.

Field numbers are those of opentelemetry-proto `trace/v1` and `common/v1`.
"""

from __future__ import annotations

import gzip
import json
import struct
import urllib.error
import urllib.request
from typing import Any


def span(trace: int, span_id: int, parent: int | None, name: str, **attrs: Any) -> dict[str, Any]:
    """One OTLP/JSON span (ids as hex), ended, with string/int attributes."""
    out: dict[str, Any] = {
        "traceId": f"{trace:032x}",
        "spanId": f"{span_id:016x}",
        "name": name,
        "startTimeUnixNano": str(1_700_000_000_000_000_000 + span_id * 1_000_000),
        "endTimeUnixNano": str(1_700_000_000_000_000_000 + span_id * 1_000_000 + 500_000),
        "attributes": [
            {"key": k, "value": {"intValue": v} if isinstance(v, int) else {"stringValue": v}}
            for k, v in attrs.items()
        ],
    }
    if parent is not None:
        out["parentSpanId"] = f"{parent:016x}"
    return out


def export_json(spans: list[dict[str, Any]], service: str = "otlp-attack") -> bytes:
    return json.dumps(
        {
            "resourceSpans": [
                {
                    "resource": {"attributes": [{"key": "service.name", "value": {"stringValue": service}}]},
                    "scopeSpans": [{"scope": {"name": "attack"}, "spans": spans}],
                }
            ]
        }
    ).encode()


def post(base: str, body: bytes, content_type: str = "application/json", gz: bool = False,
         timeout: float = 120.0, token: str | None = None) -> tuple[int, bytes]:
    """POSTs one export to `base`/v1/traces; returns the status and the raw answer."""
    data = gzip.compress(body, 1) if gz else body
    req = urllib.request.Request(f"{base}/v1/traces", data=data, method="POST")
    req.add_header("Content-Type", content_type)
    if gz:
        req.add_header("Content-Encoding", "gzip")
    if token:
        req.add_header("Authorization", f"Bearer {token}")
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            return r.status, r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.read()


def partial(answer: bytes) -> tuple[int, str]:
    """(rejectedSpans, errorMessage) of a JSON answer (0, "" without partialSuccess)."""
    body = json.loads(answer or b"{}")
    p = body.get("partialSuccess") or {}
    return int(p.get("rejectedSpans") or 0), p.get("errorMessage") or ""


# -- protobuf ------------------------------------------------------------------


def varint(n: int) -> bytes:
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def field(num: int, payload: bytes) -> bytes:
    """A length-delimited field."""
    return varint(num << 3 | 2) + varint(len(payload)) + payload


def fixed64(num: int, value: int) -> bytes:
    return varint(num << 3 | 1) + struct.pack("<Q", value)


def pb_span(trace: int, span_id: int, parent: int | None, name: str, attributes: bytes = b"") -> bytes:
    """A `Span` message; `attributes` are encoded `KeyValue` fields (number 9) already."""
    out = field(1, trace.to_bytes(16, "big")) + field(2, span_id.to_bytes(8, "big"))
    if parent is not None:
        out += field(4, parent.to_bytes(8, "big"))
    out += field(5, name.encode())
    out += fixed64(7, 1_700_000_000_000_000_000) + fixed64(8, 1_700_000_000_500_000_000)
    return out + attributes


def pb_attribute(key: str, any_value: bytes) -> bytes:
    """A span's `attributes` entry (field 9): `KeyValue{key, value}`."""
    return field(9, field(1, key.encode()) + field(2, any_value))


def pb_array(elements: bytes) -> bytes:
    """An `AnyValue` holding an `ArrayValue` of already encoded `values` fields."""
    return field(5, elements)


def pb_export(spans: list[bytes], service: str = "otlp-attack") -> bytes:
    resource = field(1, field(1, b"service.name") + field(2, field(1, service.encode())))
    scope_spans = field(1, field(1, b"attack")) + b"".join(field(2, s) for s in spans)
    return field(1, field(1, resource) + field(2, scope_spans))


def pb_partial(answer: bytes) -> tuple[int, str]:
    """(rejectedSpans, errorMessage) of a protobuf `ExportTraceServiceResponse`."""
    rejected, message = 0, ""
    pos = 0

    def read_varint(buf: bytes, at: int) -> tuple[int, int]:
        n, shift = 0, 0
        while True:
            b = buf[at]
            at += 1
            n |= (b & 0x7F) << shift
            shift += 7
            if not b & 0x80:
                return n, at

    while pos < len(answer):
        tag, pos = read_varint(answer, pos)
        length, pos = read_varint(answer, pos)
        inner = answer[pos : pos + length]
        pos += length
        if tag >> 3 != 1:
            continue
        at = 0
        while at < len(inner):
            t, at = read_varint(inner, at)
            if t & 7 == 0:
                rejected, at = read_varint(inner, at)
            else:
                n, at = read_varint(inner, at)
                message = inner[at : at + n].decode(errors="replace")
                at += n
    return rejected, message
