#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Writes that are logged once acknowledged, and their check after a fault.

    ack_writer.py write DEV LOG [--blocks N] [--first F] [--seconds S]
    ack_writer.py verify DEV LOG

write   writes 4 KiB blocks with O_DIRECT|O_DSYNC to N blocks of DEV from
        block F (default 0), in a shuffled order over and over, each block stamped with
        its index and a sequence number; after each write returns it
        appends "INDEX SEQ TIME" to LOG (TIME: this machine's clock, in
        seconds since the epoch, when the write was acknowledged; put LOG
        where it outlives the machine that writes). Runs S seconds, or
        until killed (a crash).
verify  reads every block LOG names and checks that it holds the last
        acknowledged write to it or a later one (a write in flight at the
        crash may have landed), never an older one or garbage. Prints a
        summary; exit status 1 naming the first block that is wrong.
"""
import argparse
import mmap
import os
import random
import struct
import sys
import time

BLOCK = 4096
MAGIC = b"CHORUSAK"
HEADER = struct.Struct("<8sQQ")  # magic, block index, sequence number


def block_bytes(index, seq):
    head = HEADER.pack(MAGIC, index, seq)
    # The rest of the block is a pattern of both numbers: a torn or stale
    # block cannot pass for this one.
    body = struct.pack("<QQ", seq ^ 0x5A5A5A5A5A5A5A5A, index) * ((BLOCK - len(head)) // 16)
    return (head + body).ljust(BLOCK, b"\0")


def parse(data):
    magic, index, seq = HEADER.unpack_from(data)
    if magic != MAGIC or data != block_bytes(index, seq):
        return None
    return index, seq


def write(args):
    fd = os.open(args.dev, os.O_WRONLY | os.O_DIRECT | os.O_DSYNC)
    log = os.open(args.log, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    buf = mmap.mmap(-1, BLOCK)
    order = list(range(args.first, args.first + args.blocks))
    seq, end = 0, time.monotonic() + args.seconds
    while time.monotonic() < end:
        random.shuffle(order)
        for index in order:
            seq += 1
            buf[:] = block_bytes(index, seq)
            os.pwrite(fd, buf, index * BLOCK)
            os.write(log, b"%d %d %.6f\n" % (index, seq, time.time()))
            if time.monotonic() >= end:
                break
    print("wrote %d blocks" % seq)


def verify(args):
    acked = {}
    with open(args.log) as f:
        for line in f:
            parts = line.split()
            if len(parts) != 3:
                continue  # a line cut by the crash: never acknowledged in full
            index, seq = int(parts[0]), int(parts[1])
            acked[index] = max(seq, acked.get(index, 0))
    fd = os.open(args.dev, os.O_RDONLY | os.O_DIRECT)
    buf = mmap.mmap(-1, BLOCK)
    newer = 0
    for index in sorted(acked):
        os.preadv(fd, [buf], index * BLOCK)
        got = parse(bytes(buf))
        if got is None or got[0] != index:
            sys.exit("block %d: not a block this workload wrote (last acknowledged seq %d)"
                     % (index, acked[index]))
        if got[1] < acked[index]:
            sys.exit("block %d: seq %d, older than the acknowledged %d: a write was lost"
                     % (index, got[1], acked[index]))
        newer += got[1] > acked[index]
    print("verified %d blocks, %d acknowledged writes in the log; %d hold a later write"
          % (len(acked), sum(1 for _ in open(args.log)), newer))


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("mode", choices=["write", "verify"])
    p.add_argument("dev")
    p.add_argument("log")
    p.add_argument("--blocks", type=int, default=2048)
    p.add_argument("--first", type=int, default=0)
    p.add_argument("--seconds", type=float, default=3600)
    args = p.parse_args()
    write(args) if args.mode == "write" else verify(args)


if __name__ == "__main__":
    main()
