// Building and parsing chorus generic netlink messages, apart from any
// socket so that both directions can be unit-tested with plain buffers.
#ifndef CHORUS_LIB_GENL_CODEC_H_
#define CHORUS_LIB_GENL_CODEC_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include <netlink/msg.h>

#include "lib/uuid.h"

namespace chorus {

struct NlMsgDeleter {
    void operator()(nl_msg* msg) const { nlmsg_free(msg); }
};
// An owned libnl message.
using NlMsgPtr = std::unique_ptr<nl_msg, NlMsgDeleter>;

// Per-volume counters (CHORUS_A_STATS). Counters the kernel does not send
// stay 0, so an older module with fewer counters still parses.
struct VolumeStats {
    uint64_t reads = 0;
    uint64_t read_bytes = 0;
    uint64_t writes = 0;
    uint64_t write_bytes = 0;
    uint64_t flushes = 0;
    uint64_t fua_writes = 0;
    uint64_t discards = 0;
    uint64_t write_zeroes = 0;
    uint64_t errors = 0;
};

// A volume as the kernel describes it in a VOLUME_GET/CREATE reply or an
// EVENT notification.
struct VolumeInfo {
    std::string name;
    std::string backing_path;
    uint64_t size_bytes = 0;
    uint32_t block_size = 0;
    Uuid uuid{};
    uint32_t minor = 0;
    std::string disk_name;  // "chorus0"; the device node is /dev/<disk_name>
    uint32_t state = 0;     // enum chorus_volume_state
    uint32_t open_count = 0;
    std::optional<VolumeStats> stats;
    uint32_t event = 0;  // enum chorus_event, CHORUS_CMD_EVENT only
};

struct VolumeCreateRequest {
    std::string name;
    std::string backing_path;
    std::optional<uint64_t> size_bytes;  // default: the backing device's size
    std::optional<uint32_t> block_size;  // default: the backing device's block size
    std::optional<Uuid> uuid;            // default: random, chosen by the kernel
};

// Request builders. family is the resolved generic netlink family id. The
// socket layer fills in port id, sequence number and NLM_F_ACK when sending.
NlMsgPtr BuildVolumeCreate(int family, const VolumeCreateRequest& req);
NlMsgPtr BuildVolumeDestroy(int family, std::string_view name);
NlMsgPtr BuildVolumeGet(int family, std::string_view name);
NlMsgPtr BuildVolumeDump(int family);

// Parses one netlink message (starting with its nlmsghdr) carrying a volume:
// a CREATE/GET reply or an EVENT. Validates the message and attribute
// lengths and that every attribute a volume always has is present; unknown
// attributes are ignored (the ABI only ever appends). Throws chorus::Error
// describing what is wrong, or NetlinkError if the message is an error ack.
VolumeInfo ParseVolumeMessage(std::span<const uint8_t> msg);

// The contents of an NLMSG_ERROR message: errnum is the positive errno (0 for
// a plain ACK); extack is NLMSGERR_ATTR_MSG if the kernel sent one, else a
// description of NLMSGERR_ATTR_MISS_TYPE if present, else empty.
struct NetlinkAck {
    int errnum = 0;
    std::string extack;
};
// Throws chorus::Error if msg is not a well-formed NLMSG_ERROR message.
NetlinkAck ParseAckMessage(std::span<const uint8_t> msg);

// "CHORUS_A_SIZE_BYTES" for diagnostics; "attribute N" if unknown.
std::string AttrName(int type);
// "online", "failed", "unknown(N)".
std::string VolumeStateName(uint32_t state);
// "created", "destroyed", "state", "unknown(N)".
std::string EventName(uint32_t event);

}  // namespace chorus

#endif  // CHORUS_LIB_GENL_CODEC_H_
