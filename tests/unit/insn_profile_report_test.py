#!/usr/bin/env python3
"""tools/vm/insn-profile/report on made-up snapshots: the window's counts (after - before) are
charged to the symbol at or below each address, modules and areas add up, --ios divides, and
a kallsyms read without root (zero addresses) is refused with a clear error.

usage: insn_profile_report_test.py REPORT"""

import json
import os
import subprocess
import sys
import tempfile

KALLSYMS = """ffffffff81000000 T _stext
ffffffff81001000 T tcp_sendmsg
ffffffff81002000 t kmem_cache_alloc
ffffffff81003000 D some_data
ffffffffc0001000 t chorus_repl_dispatch\t[chorus]
ffffffffc0002000 t drbd_send_dblock\t[drbd]
"""
BEFORE = """ffffffff81001010 100 10
ffffffffc0001004 50 5
user 1000 100
overflow 0 0
"""
AFTER = """ffffffff81001010 300 30
ffffffff81001800 100 10
ffffffff81002004 200 20
ffffffff81003008 400 40
ffffffffc0001004 850 85
ffffffffc0002000 7 1
user 3000 300
overflow 0 0
"""


def run(report, d, *extra):
    args = [sys.executable, report, "--kallsyms", f"{d}/k", "--before", f"{d}/b",
            "--after", f"{d}/a", "--json", *extra]
    return subprocess.run(args, capture_output=True, text=True)


def check(cond, what):
    if not cond:
        print(f"not ok: {what}")
        sys.exit(1)
    print(f"ok: {what}")


def main():
    report = sys.argv[1]
    with tempfile.TemporaryDirectory() as d:
        for name, text in (("k", KALLSYMS), ("b", BEFORE), ("a", AFTER)):
            with open(f"{d}/{name}", "w") as f:
                f.write(text)
        r = run(report, d)
        check(r.returncode == 0, f"report runs ({r.stderr.strip()})")
        p = json.loads(r.stdout)
        syms = {(s["symbol"], s["module"]): s["insns"] for s in p["symbols"]}
        # tcp_sendmsg: 300-100 at one address, 100 at another; the data symbol is not text,
        # so 0xffffffff81003008 belongs to kmem_cache_alloc.
        check(syms[("tcp_sendmsg", "")] == 300, "the window is after - before, per symbol")
        check(syms[("kmem_cache_alloc", "")] == 600, "only text symbols take addresses")
        check(syms[("chorus_repl_dispatch", "chorus")] == 800, "module symbols keep their module")
        check(p["kernel_insns"] == 1707 and p["user_insns"] == 2000, "kernel and user totals")
        check(p["modules"] == {"vmlinux": 900, "chorus": 800, "drbd": 7}, "by module")
        check(p["areas"]["chorus"] == 800 and p["areas"]["drbd"] == 7
              and p["areas"]["tcp/ip, net core"] == 300
              and p["areas"]["memory allocation"] == 600, "by area")
        r = run(report, d, "--ios", "100")
        p = json.loads(r.stdout)
        check(abs(p["kernel_insns"] - 17.07) < 1e-9, "--ios gives counts per I/O")
        with open(f"{d}/k", "w") as f:
            f.write("".join("0" * 16 + line[16:] for line in KALLSYMS.splitlines(True)))
        r = run(report, d)
        check(r.returncode != 0 and "kptr_restrict" in r.stderr,
              "a kallsyms without addresses is refused, saying why")


if __name__ == "__main__":
    main()
