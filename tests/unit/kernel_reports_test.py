#!/usr/bin/env python3
"""tools/vm/lib/kernel-reports on guest logs made from a real one: the known nvmet-tcp lockdep
report (data/lockdep-nvmet-wq.log, from a debug-kernel cluster run) is skipped as known, also
when the log goes on with chorus's own messages (stop 61: a volume made on /dev/chorus_pool
after the report was read as part of it, and the known report failed the run); the same report
with a chorus frame in its trace, or a WARNING in chorus code, is not known.

usage: kernel_reports_test.py KERNEL_REPORTS KNOWN_FILE DATA_DIR"""

import os
import subprocess
import sys

PATTERNS = 'BUG:|WARNING:|Oops|general protection|possible circular locking'
AFTER = """[ 1834.509238] chorus: xvol: created as chorus0 on /dev/chorus_pool/chorus-xvol, 16777216 bytes, block size 4096
[ 1834.600000] chorus: xvol: role owner, epoch 1
"""
CHORUS_WARNING = """[  100.000000] ------------[ cut here ]------------
[  100.000001] WARNING: CPU: 1 PID: 69 at kernel/conn.c:10 chorus_conn_send+0x12/0x30 [chorus]
[  100.000002] Call Trace:
[  100.000003]  <TASK>
[  100.000004]  chorus_conn_send+0x12/0x30 [chorus]
[  100.000005]  </TASK>
[  100.000006] ---[ end trace 0000000000000000 ]---
"""


def check(cond, what):
    if not cond:
        print(f"not ok: {what}")
        sys.exit(1)
    print(f"ok: {what}")


def run(tool, known, log):
    p = subprocess.run([tool, PATTERNS, known, 'vm2'], input=log, capture_output=True,
                       text=True, check=False)
    return p.returncode, p.stdout


def main():
    tool, known, data = sys.argv[1:4]
    with open(os.path.join(data, 'lockdep-nvmet-wq.log')) as f:
        report = f.read()

    rc, out = run(tool, known, report)
    check(rc == 0 and 'known report, not chorus' in out, 'the nvmet-wq lockdep report is known')

    rc, out = run(tool, known, report + AFTER)
    check(rc == 0 and 'known report, not chorus' in out,
          'chorus messages after its backtrace are not part of the report')

    framed = report.replace(' process_one_work+0x891/0x12d0\n',
                            ' chorus_conn_send+0x12/0x30 [chorus]\n', 1)
    check(framed != report, 'the fixture has a frame to replace')
    rc, out = run(tool, known, framed)
    check(rc == 1 and 'possible circular locking' in out,
          'the same report with a chorus frame is not known')

    rc, out = run(tool, known, report + AFTER + CHORUS_WARNING)
    check(rc == 1 and 'chorus_conn_send' in out and 'known report' in out,
          'a WARNING in chorus code after the known report fails, the known one is still named')


if __name__ == '__main__':
    main()
