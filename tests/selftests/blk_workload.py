#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Block-layer behaviour of a block device, checked against a model of its data.

    blk_workload.py DEV CHECK...

    ranges   discards and write-zeroes of many sizes and alignments, and
             misaligned or out-of-range ones refused
    sizes    O_DIRECT writes and reads from one logical block to past the
             queue's maximum, at several alignments
    ro       BLKROSET/BLKROGET: a read-only device refuses writes, discards
             and write-zeroes and keeps its data; writable again after
    rrpart   BLKRRPART answers (0, or EINVAL without partition support) and
             the device still works

Written after blktests' block group, not copied from it. The device (its
first --limit-mb MiB, 128 by default) is first filled with seeded random
data whose expected content is kept in memory; each check ends by reading
it all back with O_DIRECT and comparing, except where a discard left the
content unspecified. One line per check; exit status 1 on the first
difference, naming it.
"""
import argparse
import errno
import fcntl
import mmap
import os
import random
import struct
import sys

BLKROSET = 0x125D
BLKROGET = 0x125E
BLKRRPART = 0x125F
BLKGETSIZE64 = 0x80081272
BLKDISCARD = 0x1277
BLKZEROOUT = 0x127F
BLKSSZGET = 0x1268
MiB = 1 << 20


class Fail(Exception):
    pass


def sysfs(dev, attr):
    name = os.path.basename(os.path.realpath(dev))
    with open("/sys/block/%s/queue/%s" % (name, attr)) as f:
        return int(f.read().split()[0])


class Device:
    """The device, opened O_DIRECT, and the model of what it holds."""

    def __init__(self, path, seed, limit):
        self.path = path
        self.fd = os.open(path, os.O_RDWR | os.O_DIRECT)
        self.end = struct.unpack("Q", fcntl.ioctl(self.fd, BLKGETSIZE64, b"\0" * 8))[0]
        self.size = min(self.end, limit)
        self.lbs = struct.unpack("i", fcntl.ioctl(self.fd, BLKSSZGET, b"\0" * 4))[0]
        self.max_io = sysfs(path, "max_sectors_kb") * 1024
        self.rng = random.Random(seed)
        self.model = bytearray(self.size)
        self.unknown = []          # (off, len) ranges a discard left unspecified
        self.buf = mmap.mmap(-1, 4 * self.max_io + 2 * MiB)

    def write(self, off, data):
        view = memoryview(self.buf)[:len(data)]
        view[:] = data
        n = os.pwrite(self.fd, view, off)
        if n != len(data):
            raise Fail("short write at %d: %d of %d" % (off, n, len(data)))
        self.model[off:off + len(data)] = data
        self.unknown = [r for r in self.unknown if r[0] + r[1] <= off or r[0] >= off + len(data)]

    def read(self, off, length):
        view = memoryview(self.buf)[:length]
        n = os.preadv(self.fd, [view], off)
        if n != length:
            raise Fail("short read at %d: %d of %d" % (off, n, length))
        return bytes(view)

    def fill(self):
        for off in range(0, self.size, MiB):
            self.write(off, self.rng.randbytes(min(MiB, self.size - off)))

    def known(self, off, length):
        """Byte mask of [off, off+length): False where a discard left it open."""
        mask = bytearray(b"\1") * length
        for (u, ul) in self.unknown:
            a, b = max(u, off), min(u + ul, off + length)
            if a < b:
                mask[a - off:b - off] = bytes(b - a)
        return mask

    def check(self, what):
        for off in range(0, self.size, MiB):
            n = min(MiB, self.size - off)
            got = self.read(off, n)
            want = self.model[off:off + n]
            if got == want:
                continue
            mask = self.known(off, n)
            for i in range(n):
                if mask[i] and got[i] != want[i]:
                    raise Fail("%s: byte %d differs from what was written (0x%02x, want 0x%02x)"
                               % (what, off + i, got[i], want[i]))
        print("ok: %s: all %d MiB as expected" % (what, self.size >> 20))


def ioctl_range(dev, request, off, length):
    fcntl.ioctl(dev.fd, request, struct.pack("QQ", off, length))


def ranges(dev):
    """Offsets and lengths: one block to several MiB, aligned and not."""
    lbs, out = dev.lbs, []
    lengths = [lbs, 2 * lbs, 4096 - lbs if lbs < 4096 else 4096, 4096, 7 * lbs + 4096,
               65536, 65536 + lbs, MiB - lbs, MiB, MiB + lbs, 3 * MiB + 4096, 9 * MiB]
    starts = [0, lbs, 4096 - lbs if lbs < 4096 else 4096, 4096, MiB - lbs, 4 * MiB - 4096,
              7 * MiB + 3 * lbs]
    for length in lengths:
        for start in starts:
            off = (start + length * 7) % (dev.size - length)
            off -= off % lbs
            out.append((off, length))
    out.append((dev.size - lbs, lbs))                  # the last block (in use)
    out.append((0, dev.size))                          # all of it (in use)
    return out


def cmd_ranges(dev):
    n = 0
    for (off, length) in ranges(dev):
        if n % 2:
            step = dev.zeroout_max or length
            for o in range(off, off + length, step):
                ioctl_range(dev, BLKZEROOUT, o, min(step, off + length - o))
            dev.model[off:off + length] = bytes(length)
            dev.unknown = [r for r in dev.unknown
                           if r[0] + r[1] <= off or r[0] >= off + length]
        else:
            ioctl_range(dev, BLKDISCARD, off, length)
            dev.unknown.append((off, length))
        n += 1
        # Put data back over half of it, so later ranges meet written blocks.
        if length <= 4 * MiB and n % 3 == 0:
            dev.write(off, dev.rng.randbytes(length))
    print("ok: %d discards and write-zeroes, %d to %d bytes" %
          (n, dev.lbs, dev.size))
    # Zeroed ranges must read as zeroes: the model says so; check everything.
    dev.check("after discards and write-zeroes")
    for (what, off, length) in [("offset not block aligned", dev.lbs // 2, 4096),
                                ("length not block aligned", 0, dev.lbs + 256),
                                ("past the end", dev.end - 4096, 8192)]:
        for (name, req) in [("BLKDISCARD", BLKDISCARD), ("BLKZEROOUT", BLKZEROOUT)]:
            try:
                ioctl_range(dev, req, off, length)
            except OSError as e:
                if e.errno != errno.EINVAL:
                    raise Fail("%s %s: %s, want EINVAL" % (name, what, e))
                continue
            raise Fail("%s %s was accepted" % (name, what))
    print("ok: misaligned and out-of-range discards and write-zeroes refused (EINVAL)")
    dev.check("after the refused requests")


def cmd_sizes(dev):
    lbs, top = dev.lbs, dev.max_io
    sizes = sorted({lbs, 2 * lbs, 3 * lbs, 4096, 4096 + lbs, 7680 - 7680 % lbs, 65536,
                    65536 + lbs, 131072, 524288, top - lbs, top, top + lbs, 2 * top + 4096,
                    4 * top})
    n = 0
    for size in sizes:
        for skew in (0, lbs, 4096 - lbs if lbs < 4096 else 0):
            off = (dev.rng.randrange(0, dev.size - size - 8192) // 4096) * 4096 + skew
            data = dev.rng.randbytes(size)
            dev.write(off, data)
            if dev.read(off, size) != data:
                raise Fail("a %d-byte write at %d did not read back" % (size, off))
            n += 1
    print("ok: %d O_DIRECT writes read back, %d bytes (one block) to %d "
          "(the queue's maximum is %d)" % (n, sizes[0], sizes[-1], top))
    dev.check("after all sizes")


def cmd_ro(dev):
    ro = struct.unpack("i", fcntl.ioctl(dev.fd, BLKROGET, b"\0" * 4))[0]
    if ro:
        raise Fail("BLKROGET says read-only before BLKROSET")
    fcntl.ioctl(dev.fd, BLKROSET, struct.pack("i", 1))
    try:
        if struct.unpack("i", fcntl.ioctl(dev.fd, BLKROGET, b"\0" * 4))[0] != 1:
            raise Fail("BLKROGET does not say read-only after BLKROSET 1")
        for (what, fn) in [
                ("a write", lambda: os.pwrite(dev.fd, memoryview(dev.buf)[:4096], 0)),
                ("a discard", lambda: ioctl_range(dev, BLKDISCARD, 0, 4096)),
                ("a write-zeroes", lambda: ioctl_range(dev, BLKZEROOUT, 0, 4096))]:
            try:
                fn()
            except OSError as e:
                if e.errno not in (errno.EPERM, errno.EROFS, errno.EACCES):
                    raise Fail("%s on the read-only device failed with %s" % (what, e))
                continue
            raise Fail("%s on the read-only device was accepted" % what)
        dev.read(0, MiB)
        print("ok: read-only: writes, discards and write-zeroes refused, reads work")
    finally:
        fcntl.ioctl(dev.fd, BLKROSET, struct.pack("i", 0))
    if struct.unpack("i", fcntl.ioctl(dev.fd, BLKROGET, b"\0" * 4))[0] != 0:
        raise Fail("BLKROGET still says read-only after BLKROSET 0")
    dev.write(0, dev.rng.randbytes(65536))
    print("ok: writable again after BLKROSET 0")
    dev.check("after read-only and back")


def cmd_rrpart(dev):
    for _ in range(3):
        try:
            fcntl.ioctl(dev.fd, BLKRRPART)
            print("ok: BLKRRPART succeeded")
        except OSError as e:
            if e.errno != errno.EINVAL:
                raise Fail("BLKRRPART: %s (want success, or EINVAL without partitions)" % e)
            print("ok: BLKRRPART refused with EINVAL (no partition support)")
    dev.write(MiB, dev.rng.randbytes(MiB))
    dev.check("after BLKRRPART")


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("dev")
    p.add_argument("checks", nargs="+", choices=["ranges", "sizes", "ro", "rrpart"])
    p.add_argument("--seed", type=int, default=7)
    p.add_argument("--limit-mb", type=int, default=128,
                   help="use only the first MiB of the device (default 128)")
    p.add_argument("--zeroout-max-mb", type=int, default=0,
                   help="split write-zeroes into pieces of at most this many MiB: a Linux "
                   "6.1 NVMe/TCP host truncates larger ones (Documentation/admin-guide.md)")
    args = p.parse_args()
    dev = Device(args.dev, args.seed, args.limit_mb * MiB)
    dev.zeroout_max = args.zeroout_max_mb * MiB
    check = "fill"
    try:
        dev.fill()
        for check in args.checks:
            globals()["cmd_" + check](dev)
    except (Fail, OSError) as e:
        print("FAIL: %s %s: %s" % (check, args.dev, e))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
