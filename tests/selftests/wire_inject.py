#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Speak the chorus wire protocol (include/chorus/wire.h) from userspace.

Used by the repl selftests to check that a replica refuses what it must:
it dials a replica's listener as if it were the owner (node --node), opens a
session of --conns connections, then sends one crafted message on the
first connection and reports what came back:

  status=N   an answer with wire status N (0 ok, 2 stale epoch, ...)
  closed     the replica closed the connection
  refused=N  the handshake was refused with status N
  auth-refused=N  the acceptor refused the proof in AUTH with status N
             (after which the crafted message is sent anyway: the
             connection must be closed)
  bad-acceptor-proof  the acceptor's proof in HELLO_ACK is wrong

Cases: ok-write, stale-write, bad-magic, bad-hdr-crc, bad-version, bad-type,
reserved-type, bad-flags, bad-payload-len, too-long, bad-range, unaligned,
bad-reserved, bad-volume-id, bad-payload-crc, ack-unknown, wrong-uuid.

Its HELLO carries --incarnation HEX (never 0; default 1): a replica that
follows node --node as its owner at --epoch pinned that node's incarnation
when their session came up, and refuses any other as another incarnation
of the owner at the same epoch. Run on the node it speaks for, pass that
node's own: /sys/block/chorusN/chorus/incarnation.

Authentication (Documentation/wire-protocol.rst, "Authentication"), written
from the page: --auth-secret-file F proves F's secret (a peer that knows
it); --auth-key-id HEX offers that secret id without knowing the secret (an
impostor) and answers the challenge with --auth-proof random bytes or the
acceptor's own proof echoed.
"""
import argparse
import hashlib
import hmac
import os
import socket
import struct
import sys
import uuid as uuidlib

MAGIC = 0x524F4843
HELLO, HELLO_ACK, WRITE, WRITE_ACK = 1, 2, 3, 4
AUTH, AUTH_ACK = 23, 24
F_OWNER = 1
F_FUA, F_PAYLOAD_CRC, F_AUTH = 1, 2, 0x10
LABEL_ACCEPTOR = b"chorus-acceptor\0"
LABEL_DIALLER = b"chorus-dialler\0\0"
LABEL_KEY_ID = b"chorus-key-id\0\0\0"


def _crc_table():
    table = []
    for i in range(256):
        c = i
        for _ in range(8):
            c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
        table.append(c)
    return table


TABLE = _crc_table()


def crc32c(data):
    c = 0xFFFFFFFF
    for b in data:
        c = TABLE[(c ^ b) & 0xFF] ^ (c >> 8)
    return c ^ 0xFFFFFFFF


def header(mtype, payload_len=0, epoch=0, seq=0, sector=0, length=0, flags=0,
           status=0, payload_crc=0, version=1, magic=MAGIC, volume_id=0,
           reserved=b"\0" * 8, corrupt_crc=False):
    body = struct.pack("<IBBHIIQQQIII", magic, version, mtype, flags, payload_len,
                       volume_id, epoch, seq, sector, length, status, payload_crc)
    crc = crc32c(body)
    if corrupt_crc:
        crc ^= 1
    return body + struct.pack("<I", crc) + reserved


def hello(args, index, session):
    u = uuidlib.UUID(args.uuid).bytes
    return struct.pack("<HHHHII16sQIIQQQQ16s", 1, 1, index, args.conns, args.node,
                       args.peer, u, args.sectors, args.block_size, F_OWNER,
                       args.epoch, session, 0, args.incarnation, b"\0" * 16)


def recv_exact(s, n):
    buf = b""
    while len(buf) < n:
        chunk = s.recv(n - len(buf))
        if not chunk:
            return None
        buf += chunk
    return buf


def mac(secret, label, hello_payload, ack_payload):
    """HMAC-SHA256 over the label, the HELLO, the HELLO_ACK with its mac zeroed."""
    return hmac.new(secret, label + hello_payload + ack_payload[:144] + b"\0" * 32,
                    hashlib.sha256).digest()


def key_id(secret):
    kid = hmac.new(secret, LABEL_KEY_ID, hashlib.sha256).digest()[:8]
    return int.from_bytes(kid, "little") or 1


def read_secret(path):
    with open(path, "rb") as f:
        data = f.read()
    return data[:-1] if data.endswith(b"\n") else data


def authenticate(args, s, payload, ack):
    """Answer the acceptor's challenge; None, or what went wrong."""
    if len(ack) != 176:
        return "no-challenge"
    if args.secret is not None:
        if not hmac.compare_digest(ack[144:], mac(args.secret, LABEL_ACCEPTOR, payload, ack)):
            return "bad-acceptor-proof"
        proof = mac(args.secret, LABEL_DIALLER, payload, ack)
    elif args.auth_proof == "echo":
        proof = ack[144:]
    else:
        proof = os.urandom(32)
    s.sendall(header(AUTH, payload_len=32) + proof)
    ans = recv_exact(s, 64)
    if ans is None or ans[5] != AUTH_ACK:
        return "closed"
    status = struct.unpack_from("<I", ans, 44)[0]
    return f"auth-refused={status}" if status else None


def handshake(args):
    session = int.from_bytes(os.urandom(8), "little") | 1
    conns = []
    for i in range(args.conns):
        s = socket.create_connection((args.host, args.port), timeout=10)
        payload = hello(args, i, session)
        flags = 0
        if args.kid:
            payload += os.urandom(32) + struct.pack("<QQ", args.kid, 0) + b"\0" * 32
            flags = F_AUTH
        s.sendall(header(HELLO, payload_len=len(payload), flags=flags) + payload)
        ans = recv_exact(s, 64)
        if ans is None:
            return None, "closed"
        status = struct.unpack_from("<I", ans, 44)[0]
        ack = recv_exact(s, struct.unpack_from("<I", ans, 8)[0]) or b""
        if status:
            return None, f"refused={status}"
        if args.kid:
            err = authenticate(args, s, payload, ack)
            if err:
                return [s], err
        conns.append(s)
    return conns, None


def crafted(args):
    bs = args.block_size
    data = os.urandom(bs)
    sector = args.sector
    w = dict(mtype=WRITE, payload_len=bs, epoch=args.epoch, seq=7,
             sector=sector, length=bs)
    c = args.case
    if c == "stale-write":
        w["epoch"] = args.epoch - 1
    elif c == "bad-magic":
        w["magic"] = 0x12345678
    elif c == "bad-hdr-crc":
        w["corrupt_crc"] = True
    elif c == "bad-version":
        w["version"] = 2
    elif c == "bad-type":
        w["mtype"] = 99
    elif c == "reserved-type":
        w["mtype"] = 16  # NACK: reserved
    elif c == "bad-flags":
        w["flags"] = 0x100
    elif c == "bad-payload-len":
        w["payload_len"] = bs * 2
        data = data * 2
    elif c == "too-long":
        w["length"] = w["payload_len"] = (1 << 20) + bs
        data = b"\0" * w["length"]
    elif c == "bad-range":
        w["sector"] = args.sectors
    elif c == "unaligned":
        w["length"] = w["payload_len"] = bs - 1
        data = data[:-1]
    elif c == "bad-reserved":
        w["reserved"] = b"\0" * 7 + b"\1"
    elif c == "bad-volume-id":
        w["volume_id"] = 3
    elif c == "bad-payload-crc":
        w["flags"] = F_PAYLOAD_CRC
        w["payload_crc"] = crc32c(data) ^ 1
    elif c == "ack-unknown":
        w = dict(mtype=WRITE_ACK, epoch=args.epoch, seq=12345, sector=sector,
                 length=bs)
        data = b""
    elif c != "ok-write":
        raise SystemExit(f"unknown case {c}")
    return header(**w) + data


def main():
    p = argparse.ArgumentParser()
    p.add_argument("host")
    p.add_argument("case")
    p.add_argument("--port", type=int, default=7788)
    p.add_argument("--uuid", required=True)
    p.add_argument("--node", type=int, required=True)
    p.add_argument("--peer", type=int, required=True)
    p.add_argument("--sectors", type=int, required=True)
    p.add_argument("--block-size", type=int, default=512)
    p.add_argument("--epoch", type=int, required=True)
    p.add_argument("--conns", type=int, default=2)
    p.add_argument("--sector", type=int, default=2048)
    p.add_argument("--incarnation", type=lambda x: int(x, 16), default=1)
    p.add_argument("--auth-secret-file")
    p.add_argument("--auth-key-id", type=lambda x: int(x, 16))
    p.add_argument("--auth-proof", choices=("random", "echo"), default="random")
    args = p.parse_args()
    if args.case == "wrong-uuid":
        args.uuid = str(uuidlib.uuid4())
    args.secret = read_secret(args.auth_secret_file) if args.auth_secret_file else None
    args.kid = args.auth_key_id or (key_id(args.secret) if args.secret else 0)
    conns, err = handshake(args)
    if err and err.startswith("auth-refused") and conns:
        # Refused: the connection must be closed, whatever comes next.
        try:
            conns[0].settimeout(5)
            conns[0].sendall(crafted(args))
            after = "open" if recv_exact(conns[0], 64) is not None else "closed"
        except (ConnectionResetError, BrokenPipeError):
            after = "closed"
        except socket.timeout:
            after = "timeout"
        print(f"{err} {after}")
        return 0
    if err:
        print(err)
        return 0
    s = conns[0]
    s.settimeout(15)
    try:
        s.sendall(crafted(args))
        while True:
            ans = recv_exact(s, 64)
            if ans is None:
                print("closed")
                return 0
            mtype = ans[5]
            if mtype in (9,):  # PING: answer nothing, keep waiting
                continue
            print(f"status={struct.unpack_from('<I', ans, 44)[0]}")
            return 0
    except (ConnectionResetError, BrokenPipeError):
        print("closed")
        return 0
    except socket.timeout:
        print("timeout")
        return 0


if __name__ == "__main__":
    sys.exit(main())
