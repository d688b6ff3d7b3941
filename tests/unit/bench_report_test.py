#!/usr/bin/env python3
"""tools/bench/report on a made-up results dir: the goals table says which goal is met, the
floor targets get their ratios, and the hand-written part after the marker survives.

usage: bench_report_test.py REPORT"""

import json
import os
import subprocess
import sys
import tempfile

TARGETS = {  # target -> speed factor: IOPS and bandwidth scale with it, latency inversely
    "bare": 1.0, "chorus-local": 1.0, "chorus-2r": 0.5, "chorus-2r-rdma": 0.3, "drbd": 0.4,
    "nvmet-tcp-disk": 0.55, "nvmet-rdma-disk": 0.35,
}
ROWS = ["randwrite-4k-qd1", "randwrite-4k-qd32", "randread-4k-qd32", "seqwrite-256k-qd8",
        "randrw-8k-qd16"]
CPU = ("cpu 100 0 100 1000 0 0 0 0\nintr 1000\nctxt 5000\nipi 10 20 0\n"
       "vio 9pnet_virtio-requests 50\nvio virtio_blk-req 100\nvio virtio_net-input 10\n"
       "tcp 100 200\n1.0\n"
       "cpu 200 0 200 1000 0 0 0 0\nintr 3000\nctxt 9000\nipi 110 70 20\n"
       "vio 9pnet_virtio-requests 900\nvio virtio_blk-req 600\nvio virtio_net-input 1010\n"
       "tcp 3100 1200\n2.0\n100\n")

# Over 2 s: vm1's TCG thread 150 ticks (0.75 of a core), main 20, other 10; vm2 100, 10, 10.
HOST = ("qemu 1 1000 100 50\nqemu 2 500 50 20\ncpu 1000 0 1000 500 0 0 0 0\n100.0\n"
        "qemu 1 1150 120 60\nqemu 2 600 60 30\ncpu 1180 0 1180 540 0 0 0 0\n102.0\n100\n")


def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)


def make_results(d):
    write(f"{d}/meta", f"targets={' '.join(TARGETS)}\nrows={' '.join(ROWS)}\ndate=today\n"
                       "git=abc1234\nruntime=10\nwarmup=3\nsize=256M\n")
    for t, k in TARGETS.items():
        write(f"{d}/{t}/status", "ok\n")
        for r in ROWS:
            side = {"iops": 1000 * k, "bw_bytes": 1e8 * k, "total_ios": 10000 * k,
                    "clat_ns": {"mean": 1e6 / k, "percentile": {"99.000000": 5e6 / k}}}
            job = {"read": side, "write": side, "job_runtime": 10000}
            for i in (1, 2):
                write(f"{d}/{t}/{r}/run{i}.json", "fio noise\n" + json.dumps({"jobs": [job]}))
                for n in (1, 2):
                    write(f"{d}/{t}/{r}/run{i}.cpu-vm{n}", CPU)
                write(f"{d}/{t}/{r}/run{i}.host", HOST)
        if t in ("chorus-2r", "drbd"):  # a traced run of one row, as lib/schedtrace prints it
            side = {"iops": 1000 * k, "bw_bytes": 1e8 * k, "total_ios": 10000 * k,
                    "clat_ns": {"mean": 1e6 / k, "percentile": {"99.000000": 5e6 / k}}}
            write(f"{d}/{t}/randwrite-4k-qd32/traced.json",
                  json.dumps({"jobs": [{"read": side, "write": side, "job_runtime": 10000}]}))
            for n in (1, 2):
                write(f"{d}/{t}/randwrite-4k-qd32/traced.sched-vm{n}",
                      "task fio 6000\ntask kworker 3000\nwork chorus_conn_reply_workfn 1500\n"
                      "kick virtio_net-output.0 3000\nkick 9pnet_virtio-requests 60\n"
                      "window 6\nlost 0\n")
        if t in ("chorus-2r", "drbd"):  # a profiled run of one row, as perf report -q prints it
            for n in (1, 2):
                write(f"{d}/{t}/randwrite-4k-qd32/profiled.profile-vm{n}",
                      f"    31.25%  [kernel.kallsyms]  [k] pv_native_safe_halt\n"
                      f"     9.50%  [{t.split('-')[0]}]  [k] {t.split('-')[0]}_send_{n}\n"
                      "     0.75%  [kernel.kallsyms]  [k] memcpy_orig\n")


def main():
    report = sys.argv[1]
    failures = []
    with tempfile.TemporaryDirectory() as d:
        make_results(f"{d}/run")
        out = f"{d}/benchmarks.md"
        write(out, "an older run's tables\n"
                   "<!-- tools/bench/report keeps everything below this line -->\n\n"
                   "## Failover\nwritten by hand\n")
        # Twice: the second run must keep the hand-written part once, as the first did.
        for _ in range(2):
            subprocess.run([report, f"{d}/run", "--output", out], check=True)
        with open(out) as f:
            text = f.read()
    expect = [
        "| 4K QD1 write mean latency | `chorus-2r` ÷ `nvmet-tcp-disk` | 1.10× | ≤ 1.15× | met |",
        "| 4K QD32 write IOPS | `chorus-2r` ÷ `drbd` | 1.25× | ≥ 1.5× | **not met** |",
        "| 256K sequential write | `chorus-2r` ÷ `nvmet-tcp-disk` | 0.91× | ≥ 0.9× | met |",
        "| 4K QD32 read IOPS | `chorus-2r` ÷ `chorus-local` | 0.50× | ≥ 0.95× | **not met** |",
        "| RDMA 4K QD1 CPU per write | `chorus-2r-rdma` ÷ `chorus-2r` | 1.67× | ≤ 0.7× | **not met** |",
        "`chorus-2r` ÷ `nvmet-tcp-disk`",
        "- `nvmet-tcp-disk`: plain nvmet-tcp exporting vm2's `/dev/vdb`",
        "<!-- tools/bench/report keeps everything below this line -->\n\n## Failover\nwritten by hand\n",
        "**4K random write QD32, vm2**\n\n| # | `chorus-2r` | `drbd` |",
        "| idle | 31% of all samples | 31% of all samples |",
        "| 1 | 13.8% `chorus_send_2` [chorus] | 13.8% `drbd_send_2` [drbd] |",
        "| 2 | 1.1% `memcpy_orig` | 1.1% `memcpy_orig` |",
        "Per guest, vm1 / vm2",
        # 4,000 switches and 170 IPIs a second; bare does 2,000 I/Os a second, chorus-2r 1,000
        "**Context switches per I/O**",
        # 1,000 fio switches a second over 1,000 I/Os a second (chorus-2r) and 800 (drbd)
        "| 1 | 1.00 task `fio` | 1.25 task `fio` |",
        "| 3 | 0.25 work `chorus_conn_reply_workfn` | 0.31 work `chorus_conn_reply_workfn` |",
        "| 4K random write QD32 | 2.00 / 2.00 | 2.00 / 2.00 | 4.00 / 4.00 |",
        "| 4K random write QD32 | 0.09 / 0.09 | 0.09 / 0.09 | 0.17 / 0.17 |",
        # 500 disk and 1,000 network interrupts a second; chorus-2r 1,000 I/Os a second
        "| 4K random write QD32 | interrupts `virtio_blk-req` | 0.25 / 0.25 | 0.25 / 0.25 | 0.50 / 0.50 |",
        "| 4K random write QD32 | interrupts `virtio_net-input` | 0.50 / 0.50 | 0.50 / 0.50 | 1.00 / 1.00 |",
        # 3,000 TCP segments sent a second over 1,000 I/Os a second
        "| 4K random write QD32 | TCP segments sent | 1.50 / 1.50 | 1.50 / 1.50 | 3.00 / 3.00 |",
        # 500 transmit kicks a second over 1,000 traced I/Os a second (chorus-2r), 800 (drbd)
        "| 4K random write QD32 | kicks `virtio_net-output.0` | – / – | – / – | 0.50 / 0.50 |",
    ]
    # 0.75 cores of TCG over 1,000 I/Os a second (chorus-2r): 750 µs; 1.5 cores busy in all
    expect += ["| 4K random write QD32 | TCG | 375 / 250 | 375 / 250 | 750 / 500 |",
               "| 4K random write QD32 | host busy, cores | 1.50 | 1.50 | 1.50 |",
               "| 4K random write QD32 | whole host busy, cores | 1.80 | 1.80 | 1.80 |"]
    # Host time per I/O 1.5 cores over 2,000 k I/Os a second: chorus-2r 1,500 µs (a sixth of it
    # outside TCG), drbd 1,875, nvmet-rdma-disk 2,143, chorus-2r-rdma 2,500. The floor adds
    # chorus-local's vm1, 0.9 cores over 2,000 I/Os a second (450 µs), to the remote write's:
    # nvmet-tcp-disk 1,364 + 450, nvmet-rdma-disk 2,143 + 450. The mixed row has none.
    expect += ["| 4K QD32 write IOPS | `drbd` 1,875 (1.50) | 1.5× | ≤ 1,250 | 1,500 (1.50) | "
               "1,250 / 250 | 1.20× | 1,814 | 1.45× |",
               "| RDMA 4K QD32 write IOPS | `nvmet-rdma-disk` 2,143 (1.50) | 0.8× | ≤ 2,679 | "
               "2,500 (1.50) | 2,083 / 417 | 0.93× | 2,593 | 0.97× |",
               "| 8K 50/50 QD16 IOPS | `drbd` 1,875 (1.50) | 1.5× | ≤ 1,250 | 1,500 (1.50) | "
               "1,250 / 250 | 1.20× | – | – |"]
    for e in expect[-5:]:
        if e not in text:
            failures.append(f"missing: {e}")
    if "9pnet" in text:
        failures.append("the lab's 9p device is in the virtio table")
    for e in expect:
        if e not in text:
            failures.append(f"missing: {e}")
    if "an older run's tables" in text:
        failures.append("the older run's generated part was kept")
    if text.count("## Failover") != 1:
        failures.append("the kept part is not there exactly once")
    for f in failures:
        print("FAIL:", f)
    if failures:
        print(text)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
