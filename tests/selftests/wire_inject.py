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

Cases: ok-write, stale-write, bad-magic, bad-hdr-crc, bad-version, bad-type,
reserved-type, bad-flags, bad-payload-len, too-long, bad-range, unaligned,
bad-reserved, bad-volume-id, bad-payload-crc, ack-unknown, wrong-uuid.
"""
import argparse
import os
import socket
import struct
import sys
import uuid as uuidlib

MAGIC = 0x524F4843
HELLO, HELLO_ACK, WRITE, WRITE_ACK = 1, 2, 3, 4
F_OWNER = 1
F_FUA, F_PAYLOAD_CRC = 1, 2


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
    return struct.pack("<HHHHII16sQIIQQQ24s", 1, 1, index, args.conns, args.node,
                       args.peer, u, args.sectors, args.block_size, F_OWNER,
                       args.epoch, session, 0, b"\0" * 24)


def recv_exact(s, n):
    buf = b""
    while len(buf) < n:
        chunk = s.recv(n - len(buf))
        if not chunk:
            return None
        buf += chunk
    return buf


def handshake(args):
    session = int.from_bytes(os.urandom(8), "little") | 1
    conns = []
    for i in range(args.conns):
        s = socket.create_connection((args.host, args.port), timeout=10)
        h = hello(args, i, session)
        s.sendall(header(HELLO, payload_len=len(h)) + h)
        ans = recv_exact(s, 64)
        if ans is None:
            return None, "closed"
        status = struct.unpack_from("<I", ans, 44)[0]
        recv_exact(s, struct.unpack_from("<I", ans, 8)[0])
        if status:
            return None, f"refused={status}"
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
    args = p.parse_args()
    if args.case == "wrong-uuid":
        args.uuid = str(uuidlib.uuid4())
    conns, err = handshake(args)
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
