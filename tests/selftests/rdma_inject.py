#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Break chorus's RDMA framing from userspace (pyverbs, soft-RoCE).

Used by the repl selftests (rdma variant) to check that the RDMA receiver
(kernel/rdma_recv.c, kernel/rdma_read.c) refuses what it must. It connects
one RC queue pair to a node's RDMA listener with valid private data (struct
chorus_rdma_cm_data), so the node accepts it and waits for a HELLO; then it
sends one crafted SEND and waits for the node to close the connection:

  closed    the node disconnected (what every case expects)
  timeout   nothing happened within --timeout seconds
  error: …  the connection could not be set up

Cases and the kernel log line each must cause:

  short            a SEND shorter than a header      "bad length"
  bad-magic        a header with a wrong magic       "bad magic"
  credit-data      a credit return carrying data     "bad credit return with data"
  credit-overflow  more credits than our buffers     "more credits than it has buffers"
  chunk-header     second chunk of a message with another header
                                                     "bad chunk header"
  chunk-length     a non-final chunk not whole pages "bad chunk length"
  oversized        a SEND larger than a receive buffer
                                                     "RDMA receive failed"
  imm-flags        an unknown immediate-data bit     "bad immediate data flags"
  read-credit      READ and credit-only at once      "bad immediate data flags"
  read-desc-size   a READ message of the wrong size  "bad READ descriptor length"
  read-len         descriptor length != payload_len  "bad READ length"
  read-rkey        a READ descriptor with rkey 0     "bad READ rkey"
  read-fault       a READ of memory we never registered
                                                     "RDMA READ failed"

Message-level checks (epoch, range, crc, ...) do not depend on the transport;
wire_inject.py covers them over TCP.
"""
import argparse
import os
import signal
import socket
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import wire_inject as wi  # noqa: E402  (header(), after the path is set)

from pyverbs.cmid import CMID, AddrInfo, ConnParam, CMEvent, CMEventChannel  # noqa: E402
import pyverbs.cm_enums as ce  # noqa: E402
import pyverbs.enums as e  # noqa: E402
from pyverbs.cq import CQ  # noqa: E402
from pyverbs.mr import MR  # noqa: E402
from pyverbs.pd import PD  # noqa: E402
from pyverbs.qp import QP, QPCap, QPInitAttr  # noqa: E402
from pyverbs.wr import RecvWR, SendWR, SGE  # noqa: E402

RDMA_VERSION = 2             # CHORUS_RDMA_VERSION
CHUNK = 64 * 1024            # CHORUS_RDMA_CHUNK: payload per receive buffer
CREDIT_ONLY = 1 << 31        # CHORUS_RDMA_CREDIT_ONLY
READ = 1 << 30               # CHORUS_RDMA_READ: data to READ
HDR = 64                     # sizeof(struct chorus_wire_hdr)
PAGE = 4096
DEPTH = 4                    # our receive buffers: the node's credits
WRITE = wi.WRITE


class Timeout(Exception):
    pass


def on_alarm(signum, frame):
    raise Timeout()


def crafted(case):
    """The SENDs of a case: a list of (bytes, imm or None)."""
    write = wi.header(WRITE, payload_len=2 * PAGE, epoch=1, seq=7, sector=0,
                      length=2 * PAGE)
    page = b"\xa5" * PAGE
    if case == "short":
        return [(b"\0" * 20, None)]
    if case == "bad-magic":
        return [(wi.header(WRITE, payload_len=PAGE, epoch=1, seq=7, length=PAGE,
                           magic=0x12345678) + page, None)]
    if case == "credit-data":
        return [(write + page, CREDIT_ONLY)]
    if case == "credit-overflow":
        return [(write + page, 1000)]
    if case == "chunk-header":
        other = wi.header(WRITE, payload_len=2 * PAGE, epoch=1, seq=8, sector=0,
                          length=2 * PAGE)
        return [(write + page, None), (other + page, None)]
    if case == "chunk-length":
        return [(write + page[:1000], None)]
    if case == "oversized":
        big = wi.header(WRITE, payload_len=CHUNK + PAGE, epoch=1, seq=7,
                        length=CHUNK + PAGE)
        return [(big + b"\0" * (CHUNK + PAGE), None)]
    one = wi.header(WRITE, payload_len=PAGE, epoch=1, seq=7, length=PAGE)
    # struct chorus_rdma_read_desc: addr, rkey, len (little endian)
    if case == "imm-flags":
        return [(one + page, 1 << 29)]
    if case == "read-credit":
        return [(one + struct.pack("<QII", 0x10000, 0x1234, PAGE), READ | CREDIT_ONLY)]
    if case == "read-desc-size":
        return [(one + struct.pack("<Q", 0x10000), READ)]
    if case == "read-len":
        return [(one + struct.pack("<QII", 0x10000, 0x1234, 2 * PAGE), READ)]
    if case == "read-rkey":
        return [(one + struct.pack("<QII", 0x10000, 0, PAGE), READ)]
    if case == "read-fault":
        return [(one + struct.pack("<QII", 0x10000, 0x1234, PAGE), READ)]
    raise SystemExit(f"unknown case {case}")


def expect(channel, want):
    """Wait for the next CM event on channel; it must be want."""
    ev = CMEvent(channel)
    got = ev.event_type
    ev.ack_cm_event()
    if got != want:
        raise ConnectionError(f"CM event {got}, expected {want}")


def connect(host, port):
    """An RC QP of our own, connected to the node's listener, in RTS.

    Asynchronous rdma_cm (an event channel of our own), so that the node's
    disconnect can be waited for; the QP is ours rather than the CM id's,
    so that SENDs can carry immediate data.
    """
    channel = CMEventChannel()
    cmid = CMID(creator=channel, port_space=ce.RDMA_PS_TCP)
    ai = AddrInfo(dst=host, dst_service=str(port), port_space=ce.RDMA_PS_TCP)
    cmid.resolve_addr(ai, 5000)
    expect(channel, ce.RDMA_CM_EVENT_ADDR_RESOLVED)
    cmid.resolve_route(5000)
    expect(channel, ce.RDMA_CM_EVENT_ROUTE_RESOLVED)
    pd = PD(cmid.context)
    cq = CQ(cmid.context, 4 * DEPTH)
    cap = QPCap(max_send_wr=DEPTH, max_recv_wr=DEPTH, max_send_sge=1,
                max_recv_sge=1)
    qp = QP(pd, QPInitAttr(qp_type=e.IBV_QPT_RC, scq=cq, rcq=cq, cap=cap))
    attr, mask = cmid.init_qp_attr(e.IBV_QPS_INIT)
    qp.modify(attr, mask)
    # Receive buffers as the kernel's: a header slot and a chunk.
    rmr = MR(pd, DEPTH * (HDR + CHUNK), e.IBV_ACCESS_LOCAL_WRITE)
    for i in range(DEPTH):
        qp.post_recv(RecvWR(wr_id=i, num_sge=1,
                            sg=[SGE(rmr.buf + i * (HDR + CHUNK), HDR + CHUNK,
                                    rmr.lkey)]))
    param = ConnParam(resources=1, depth=1, retry=7, rnr_retry=7, qp_num=qp.qp_num,
                      data_len=16)
    param.set_private_data(struct.pack("<HHI8x", RDMA_VERSION, DEPTH, CHUNK))
    cmid.connect(param)
    expect(channel, ce.RDMA_CM_EVENT_CONNECT_RESPONSE)
    for state in (e.IBV_QPS_RTR, e.IBV_QPS_RTS):
        attr, mask = cmid.init_qp_attr(state)
        qp.modify(attr, mask)
    cmid.establish()
    return channel, cmid, pd, cq, qp, rmr


def send_all(pd, cq, qp, sends):
    size = max(len(b) for b, _ in sends)
    smr = MR(pd, size * len(sends), e.IBV_ACCESS_LOCAL_WRITE)
    for i, (data, imm) in enumerate(sends):
        smr.write(data, len(data), i * size)
        op = e.IBV_WR_SEND if imm is None else e.IBV_WR_SEND_WITH_IMM
        wr = SendWR(wr_id=100 + i, opcode=op, num_sge=1,
                    sg=[SGE(smr.buf + i * size, len(data), smr.lkey)],
                    send_flags=e.IBV_SEND_SIGNALED,
                    # imm_data is in wire (big-endian) order
                    imm_data=socket.htonl(imm) if imm is not None else 0)
        qp.post_send(wr)
    return smr


def main():
    p = argparse.ArgumentParser()
    p.add_argument("host")
    p.add_argument("case")
    p.add_argument("--port", type=int, default=7788)
    p.add_argument("--timeout", type=int, default=20)
    args = p.parse_args()
    sends = crafted(args.case)
    signal.signal(signal.SIGALRM, on_alarm)
    signal.alarm(args.timeout)
    try:
        try:
            channel, cmid, pd, cq, qp, rmr = connect(args.host, args.port)
        except Exception as ex:  # pyverbs raises its own error types
            print(f"error: connect: {ex}")
            return 1
        smr = send_all(pd, cq, qp, sends)
        while True:
            ev = CMEvent(channel)
            kind = ev.event_type
            ev.ack_cm_event()
            if kind in (ce.RDMA_CM_EVENT_DISCONNECTED,
                        ce.RDMA_CM_EVENT_TIMEWAIT_EXIT):
                print("closed")
                break
        del smr, rmr
        return 0
    except Timeout:
        print("timeout")
        return 0


if __name__ == "__main__":
    sys.exit(main())
