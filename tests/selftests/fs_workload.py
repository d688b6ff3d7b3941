#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""A file workload for a file system on a chorus volume, with its own check.

    fs_workload.py write DIR [--files N] [--seconds S] [--seed X]
    fs_workload.py verify DIR ACKED_LOG [--crashed]

write: creates files the way applications that care about their data do:
each file is written to a temporary name, fsync'd, renamed over its final
name and the directory fsync'd (the atomic-replace pattern); some files are
replaced again later, some are deleted. Sizes are 1 KiB to 256 KiB, in
unaligned pieces. After each operation is durable, one line is printed and
flushed to standard output:

    put NAME SHA256      NAME now holds exactly this content
    del NAME             NAME no longer exists

So the caller can keep that log somewhere that outlives this machine: every
line printed is an acknowledged, durable change. It stops after --files
operations or --seconds, whichever comes first (0: no limit).

verify: checks DIR against such a log: for every name, the last change the
log records must be what DIR holds, and no other name may exist. With
--crashed, the writer died: the one operation it had in flight (it has
never more than one) was not acknowledged and may or may not have happened,
so one name may differ from the log (a replaced file's new content, or a
new file); anything more is a lost acknowledged write. Exit status 0 when
every acknowledged change is there, 1 otherwise.
"""
import argparse
import hashlib
import os
import random
import sys
import time


def fsync_dir(path):
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def put(directory, name, data):
    tmp = os.path.join(directory, "." + name + ".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        off = 0
        while off < len(data):
            n = os.write(fd, data[off:off + 3001])
            off += n
        os.fsync(fd)
    finally:
        os.close(fd)
    os.rename(tmp, os.path.join(directory, name))
    fsync_dir(directory)


def write(args):
    rng = random.Random(args.seed)
    names = []
    start = time.monotonic()
    done = 0
    out = sys.stdout
    while (not args.files or done < args.files) and \
            (not args.seconds or time.monotonic() - start < args.seconds):
        roll = rng.random()
        if names and roll < 0.1:
            name = names.pop(rng.randrange(len(names)))
            os.unlink(os.path.join(args.dir, name))
            fsync_dir(args.dir)
            out.write("del %s\n" % name)
        else:
            if names and roll < 0.3:
                name = rng.choice(names)     # replace an existing file
            else:
                name = "f%06d" % done
                names.append(name)
            data = rng.randbytes(rng.randint(1024, 256 * 1024))
            put(args.dir, name, data)
            out.write("put %s %s\n" % (name, hashlib.sha256(data).hexdigest()))
        out.flush()
        done += 1
    return 0


def verify(args):
    want = {}
    with open(args.log) as log:
        for line in log:
            parts = line.split()
            if len(parts) == 3 and parts[0] == "put":
                want[parts[1]] = parts[2]
            elif len(parts) == 2 and parts[0] == "del":
                want[parts[1]] = None
            # A torn last line (the writer died mid-line) is ignored.
    bad = 0
    for name, digest in sorted(want.items()):
        path = os.path.join(args.dir, name)
        if digest is None:
            if os.path.exists(path):
                print("deleted %s exists again" % name)
                bad += 1
            continue
        try:
            with open(path, "rb") as f:
                got = hashlib.sha256(f.read()).hexdigest()
        except FileNotFoundError:
            print("acknowledged %s is missing" % name)
            bad += 1
            continue
        if got != digest:
            print("acknowledged %s has other content (%s, want %s)" %
                  (name, got[:12], digest[:12]))
            bad += 1
    extra = [n for n in os.listdir(args.dir)
             if not n.startswith(".") and n not in want and n != "lost+found"]
    for name in extra:
        print("unacknowledged %s present" % name)
    allowed = 1 if args.crashed else 0
    print("verify: %d names acknowledged, %d differ, %d unacknowledged present"
          " (%d allowed)" % (len(want), bad, len(extra), allowed))
    return 1 if bad + len(extra) > allowed else 0


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    w = sub.add_parser("write")
    w.add_argument("dir")
    w.add_argument("--files", type=int, default=200)
    w.add_argument("--seconds", type=float, default=0)
    w.add_argument("--seed", type=int, default=1)
    v = sub.add_parser("verify")
    v.add_argument("dir")
    v.add_argument("log")
    v.add_argument("--crashed", action="store_true")
    args = p.parse_args()
    return write(args) if args.cmd == "write" else verify(args)


if __name__ == "__main__":
    sys.exit(main())
