"""The ids and words benches/many.py and benches/many_pg.py share: uuid6 checkpoint ids set to
a time, their time read back, thread ids for clones, and the words of generated messages."""

from __future__ import annotations

import hashlib
import uuid

UUID_EPOCH = 0x01B21DD213814000  # 100-ns intervals between 1582-10-15 and 1970-01-01
WORDS = ("the order shipped yesterday refund policy account password reset invoice plan upgrade "
         "delivery address tracking number support agent billing cycle discount code weekend "
         "store hours return label warranty battery screen replacement appointment").split()


def uuid6_at(template: str, when_ns: int) -> str:
    """`template`'s uuid6 with its time set to `when_ns` (Unix ns): clock sequence and node kept."""
    u = uuid.UUID(template)
    ts = when_ns // 100 + UUID_EPOCH
    n = u.int & ((1 << 64) - 1)  # variant, clock_seq, node
    n |= ((ts >> 12) & 0xFFFFFFFFFFFF) << 80
    n |= (6 << 76) | ((ts & 0x0FFF) << 64)
    return str(uuid.UUID(int=n))


def id_time_ns(cid: str) -> int:
    u = uuid.UUID(cid)
    ts = ((u.int >> 80) << 12) | ((u.int >> 64) & 0x0FFF)
    return (ts - UUID_EPOCH) * 100


def clone_id(seed: int, j: int) -> str:
    return str(uuid.UUID(bytes=hashlib.md5(f"{seed}/{j}".encode()).digest(), version=4))
