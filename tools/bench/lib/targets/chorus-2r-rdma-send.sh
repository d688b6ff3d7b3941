# shellcheck shell=bash disable=SC2034   # (FIO_NODE, FIO_DEV: read by tools/bench/run)
# Target "chorus-2r-rdma-send": chorus-2r-rdma-read with chorus loaded with `rdma_data=send` on
# both nodes: every write's data goes by SEND into posted buffers, large ones too (before stop 54
# the default; `chorus-2r-rdma` now runs the default, auto: SEND up to 64 KiB, RDMA READ above).
# For A/B runs of the data path (Documentation/rdma.rst). Setup fails unless both nodes report it.
CHORUS_RDMA_DATA=send
# shellcheck source-path=SCRIPTDIR source=chorus-2r-rdma-read.sh
source "$BENCH_LIB/targets/chorus-2r-rdma-read.sh"
