"""AWS's binary event-stream framing (``application/vnd.amazon.eventstream``), the encoder only:
what Bedrock's ``converse-stream`` sends and boto3 parses.

A message is a prelude (total length, headers length: big-endian uint32s) and its CRC32, the
headers (name length, name, type 7 = string, value length, value), the payload, and the CRC32
of all that came before.
"""

from __future__ import annotations

import struct
import zlib
from collections.abc import Mapping

__all__ = ["event_message"]

_STRING = 7


def _headers(headers: Mapping[str, str]) -> bytes:
    out = b""
    for name, value in headers.items():
        n, v = name.encode(), value.encode()
        out += struct.pack(">B", len(n)) + n + struct.pack(">BH", _STRING, len(v)) + v
    return out


def event_message(event_type: str, payload: bytes, message_type: str = "event") -> bytes:
    """One event-stream message: an ``event`` (or ``exception``) named ``event_type``."""
    kind = ":event-type" if message_type == "event" else ":exception-type"
    head = _headers(
        {kind: event_type, ":content-type": "application/json", ":message-type": message_type}
    )
    prelude = struct.pack(">II", 12 + len(head) + len(payload) + 4, len(head))
    message = prelude + struct.pack(">I", zlib.crc32(prelude)) + head + payload
    return message + struct.pack(">I", zlib.crc32(message))
