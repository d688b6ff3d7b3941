#!/usr/bin/env python3
"""tools/bench/lib/hostprof-report on a made-up profile: the busiest thread but the main one is
the TCG thread, samples become host µs per I/O (1 kHz, the window, fio's rate), an address
QEMU does not export is charged to the exported function before it, each kind adds up, and a
run without its fio result is refused with a clear error.

usage: hostprof_report_test.py REPORT"""

import json
import os
import subprocess
import sys
import tempfile

NM = """0000000000001000 T cpu_exec
0000000000002000 T tlb_set_page_full
0000000000003000 T virtio_queue_notify
"""
# perf report -n --sort pid,dso,sym: percent, samples, tid:comm, object, [.]/[k], symbol.
VM1 = """pid 100 window 2
    40.00%   400   101:qemu-system-x86  [JIT] tid 100     [.] 0x00007f0000001000
    20.00%   200   101:qemu-system-x86  qemu-system-x86_64  [.] 0x0000000000001010
    10.00%   100   101:qemu-system-x86  qemu-system-x86_64  [.] tlb_set_page_full
     5.00%    50   101:qemu-system-x86  [kernel.kallsyms]  [k] finish_task_switch
     5.00%    50   101:qemu-system-x86  qemu-system-x86_64  [.] helper_cc_compute_all
    10.00%   100   100:qemu-system-x86  qemu-system-x86_64  [.] virtio_queue_notify
     6.00%    60   102:qemu-system-x86  libc.so.6  [.] memcpy
     4.00%    40   103:qemu-system-x86  [kernel.kallsyms]  [k] io_submit
"""
FIO = {"jobs": [{"read": {"total_ios": 0}, "write": {"total_ios": 2000},
                 "job_runtime": 1000}]}


def check(cond, what):
    if not cond:
        print(f"not ok: {what}")
        sys.exit(1)
    print(f"ok: {what}")


def main():
    report = sys.argv[1]
    with tempfile.TemporaryDirectory() as d:
        run = os.path.join(d, "chorus-2r", "randwrite-4k-qd32", "hostprof")
        os.makedirs(os.path.dirname(run))
        open(f"{d}/nm", "w").write(NM)
        open(f"{run}.vm1", "w").write(VM1)
        json.dump(FIO, open(f"{run}.json", "w"))
        p = subprocess.run([sys.executable, report, "--nm", f"{d}/nm", "--json", run],
                           capture_output=True, text=True)
        check(p.returncode == 0, f"runs ({p.stderr.strip()})")
        j = json.loads(p.stdout)
        col = "chorus-2r/randwrite-4k-qd32 vm1"
        check(j["columns"] == [col], "one column per VM with a profile")
        t = {k: v[col] for k, v in j["table"].items()}
        # 2,000 I/Os per second over a 2 s window; a sample is 1 ms: 800 samples = 200 µs/I/O.
        check(abs(t["TCG thread, all"] - 200) < 0.01, "TCG thread = busiest non-main thread")
        check(abs(t["TCG: guest code (translated)"] - 100) < 0.01, "[JIT] is guest code")
        check(abs(t["TCG: execution loop, TB lookup"] - 50) < 0.01,
              "an unexported address goes to the exported function before it (~cpu_exec)")
        check(abs(t["TCG: soft MMU, TLB fills and flushes"] - 25) < 0.01, "soft MMU")
        check(abs(t["TCG: host kernel"] - 12.5) < 0.01, "host kernel")
        check(abs(t["TCG: other QEMU code (x86 helpers)"] - 12.5) < 0.01, "the rest")
        check(abs(t["main thread"] - 25) < 0.01, "main thread = the process's own")
        check(abs(t["other threads"] - 25) < 0.01, "other threads")
        kinds = sum(v for k, v in t.items() if k.startswith("TCG: "))
        check(abs(kinds - t["TCG thread, all"]) < 0.01, "the kinds add up to the thread")
        check(j["top"][col][1][0] == "~cpu_exec", "the top names the resolved address")
        os.remove(f"{run}.json")
        p = subprocess.run([sys.executable, report, "--nm", f"{d}/nm", run],
                           capture_output=True, text=True)
        check(p.returncode != 0 and "no profile with its fio result" in p.stderr,
              "a run without fio's result is refused")


if __name__ == "__main__":
    main()
