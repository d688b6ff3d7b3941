#include "lib/genl_codec.h"

#include <array>
#include <cstring>

#include <linux/chorus.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>
#include <netlink/attr.h>
#include <netlink/genl/genl.h>

#include "lib/errors.h"

namespace chorus {

namespace {

constexpr std::array<const char*, CHORUS_A_MAX + 1> kAttrNames = {
    "CHORUS_A_UNSPEC",     "CHORUS_A_PAD",        "CHORUS_A_VOLUME_NAME", "CHORUS_A_BACKING_PATH",
    "CHORUS_A_SIZE_BYTES", "CHORUS_A_BLOCK_SIZE", "CHORUS_A_UUID",        "CHORUS_A_MINOR",
    "CHORUS_A_DISK_NAME",  "CHORUS_A_STATE",      "CHORUS_A_EVENT",       "CHORUS_A_OPEN_COUNT",
    "CHORUS_A_STATS",
};

NlMsgPtr NewGenlMessage(int family, uint8_t cmd, int flags) {
    NlMsgPtr msg(nlmsg_alloc());
    if (!msg)
        throw Error("out of memory allocating a netlink message", ENOMEM);
    if (genlmsg_put(msg.get(), NL_AUTO_PORT, NL_AUTO_SEQ, family, 0, flags, cmd,
                    CHORUS_GENL_VERSION) == nullptr)
        throw Error("cannot build the generic netlink header", EMSGSIZE);
    return msg;
}

void Check(int rc, int type) {
    if (rc < 0)
        throw Error("cannot add " + AttrName(type) + " to the netlink message", EMSGSIZE);
}

void PutString(nl_msg* msg, int type, std::string_view value) {
    Check(nla_put_string(msg, type, std::string(value).c_str()), type);
}

// One attribute's payload, located inside the message being parsed.
using Payload = std::span<const uint8_t>;

// Splits an attribute stream into payloads indexed by type. Types above
// max_type are skipped; a later duplicate wins, as in the kernel's nla_parse.
template <size_t N>
void SplitAttributes(Payload stream, std::array<std::optional<Payload>, N>& out,
                     const char* where) {
    size_t off = 0;
    while (off < stream.size()) {
        if (stream.size() - off < NLA_HDRLEN)
            throw Error(std::string("truncated attribute header in ") + where);
        nlattr hdr;
        std::memcpy(&hdr, stream.data() + off, sizeof(hdr));
        if (hdr.nla_len < NLA_HDRLEN || hdr.nla_len > stream.size() - off)
            throw Error(std::string("truncated attribute (type ") +
                        std::to_string(hdr.nla_type & NLA_TYPE_MASK) + ", length " +
                        std::to_string(hdr.nla_len) + ") in " + where);
        size_t type = hdr.nla_type & NLA_TYPE_MASK;
        if (type < N)
            out[type] = stream.subspan(off + NLA_HDRLEN, hdr.nla_len - NLA_HDRLEN);
        off += NLA_ALIGN(hdr.nla_len);
    }
}

template <typename T>
T GetScalar(const std::optional<Payload>& p, const std::string& name) {
    if (p->size() != sizeof(T))
        throw Error(name + " has " + std::to_string(p->size()) + " bytes, expected " +
                    std::to_string(sizeof(T)));
    T value;
    std::memcpy(&value, p->data(), sizeof(T));
    return value;
}

std::string GetString(const std::optional<Payload>& p, const std::string& name, size_t max) {
    if (p->empty() || p->back() != 0)
        throw Error(name + " is not a NUL-terminated string");
    std::string s(reinterpret_cast<const char*>(p->data()));
    if (s.empty())
        throw Error(name + " is empty");
    if (s.size() >= max)
        throw Error(name + " is longer than " + std::to_string(max - 1) + " bytes");
    return s;
}

VolumeStats ParseStats(Payload nest) {
    std::array<std::optional<Payload>, CHORUS_STAT_MAX + 1> a;
    SplitAttributes(nest, a, "CHORUS_A_STATS");
    VolumeStats s;
    auto get = [&](int type, uint64_t& field) {
        if (a[type])
            field = GetScalar<uint64_t>(a[type], "stat counter " + std::to_string(type));
    };
    get(CHORUS_STAT_READS, s.reads);
    get(CHORUS_STAT_READ_BYTES, s.read_bytes);
    get(CHORUS_STAT_WRITES, s.writes);
    get(CHORUS_STAT_WRITE_BYTES, s.write_bytes);
    get(CHORUS_STAT_FLUSHES, s.flushes);
    get(CHORUS_STAT_FUA_WRITES, s.fua_writes);
    get(CHORUS_STAT_DISCARDS, s.discards);
    get(CHORUS_STAT_WRITE_ZEROES, s.write_zeroes);
    get(CHORUS_STAT_ERRORS, s.errors);
    return s;
}

// Returns the message's payload after checking the netlink header.
Payload CheckNetlinkHeader(std::span<const uint8_t> msg, nlmsghdr& hdr) {
    if (msg.size() < NLMSG_HDRLEN)
        throw Error("truncated netlink message (" + std::to_string(msg.size()) + " bytes)");
    std::memcpy(&hdr, msg.data(), sizeof(hdr));
    if (hdr.nlmsg_len < NLMSG_HDRLEN || hdr.nlmsg_len > msg.size())
        throw Error("truncated netlink message (header says " + std::to_string(hdr.nlmsg_len) +
                    " bytes, have " + std::to_string(msg.size()) + ")");
    return msg.subspan(NLMSG_HDRLEN, hdr.nlmsg_len - NLMSG_HDRLEN);
}

}  // namespace

std::string AttrName(int type) {
    if (type >= 0 && static_cast<size_t>(type) < kAttrNames.size())
        return kAttrNames[type];
    return "attribute " + std::to_string(type);
}

std::string VolumeStateName(uint32_t state) {
    switch (state) {
        case CHORUS_VOLUME_STATE_ONLINE:
            return "online";
        case CHORUS_VOLUME_STATE_FAILED:
            return "failed";
        default:
            return "unknown(" + std::to_string(state) + ")";
    }
}

std::string EventName(uint32_t event) {
    switch (event) {
        case CHORUS_EVENT_VOLUME_CREATED:
            return "created";
        case CHORUS_EVENT_VOLUME_DESTROYED:
            return "destroyed";
        case CHORUS_EVENT_VOLUME_STATE:
            return "state";
        default:
            return "unknown(" + std::to_string(event) + ")";
    }
}

NlMsgPtr BuildVolumeCreate(int family, const VolumeCreateRequest& req) {
    NlMsgPtr msg = NewGenlMessage(family, CHORUS_CMD_VOLUME_CREATE, 0);
    PutString(msg.get(), CHORUS_A_VOLUME_NAME, req.name);
    PutString(msg.get(), CHORUS_A_BACKING_PATH, req.backing_path);
    if (req.size_bytes)
        Check(nla_put_u64(msg.get(), CHORUS_A_SIZE_BYTES, *req.size_bytes), CHORUS_A_SIZE_BYTES);
    if (req.block_size)
        Check(nla_put_u32(msg.get(), CHORUS_A_BLOCK_SIZE, *req.block_size), CHORUS_A_BLOCK_SIZE);
    if (req.uuid)
        Check(nla_put(msg.get(), CHORUS_A_UUID, CHORUS_UUID_LEN, req.uuid->data()), CHORUS_A_UUID);
    return msg;
}

NlMsgPtr BuildVolumeDestroy(int family, std::string_view name) {
    NlMsgPtr msg = NewGenlMessage(family, CHORUS_CMD_VOLUME_DESTROY, 0);
    PutString(msg.get(), CHORUS_A_VOLUME_NAME, name);
    return msg;
}

NlMsgPtr BuildVolumeGet(int family, std::string_view name) {
    NlMsgPtr msg = NewGenlMessage(family, CHORUS_CMD_VOLUME_GET, 0);
    PutString(msg.get(), CHORUS_A_VOLUME_NAME, name);
    return msg;
}

NlMsgPtr BuildVolumeDump(int family) {
    return NewGenlMessage(family, CHORUS_CMD_VOLUME_GET, NLM_F_DUMP);
}

VolumeInfo ParseVolumeMessage(std::span<const uint8_t> msg) {
    nlmsghdr nlh;
    Payload payload = CheckNetlinkHeader(msg, nlh);
    if (nlh.nlmsg_type == NLMSG_ERROR) {
        NetlinkAck ack = ParseAckMessage(msg);
        throw NetlinkError(ack.errnum, ack.extack);
    }
    if (nlh.nlmsg_type < NLMSG_MIN_TYPE)
        throw Error("unexpected netlink control message type " + std::to_string(nlh.nlmsg_type));
    if (payload.size() < GENL_HDRLEN)
        throw Error("truncated generic netlink header");
    genlmsghdr ghdr;
    std::memcpy(&ghdr, payload.data(), sizeof(ghdr));
    if (ghdr.cmd != CHORUS_CMD_VOLUME_CREATE && ghdr.cmd != CHORUS_CMD_VOLUME_GET &&
        ghdr.cmd != CHORUS_CMD_EVENT)
        throw Error("unexpected chorus command " + std::to_string(ghdr.cmd) +
                    " in a volume message");

    std::array<std::optional<Payload>, CHORUS_A_MAX + 1> a;
    SplitAttributes(payload.subspan(GENL_HDRLEN), a, "the volume message");

    // Everything a volume always has; open count and stats are optional so
    // that events about a volume being torn down need not carry them.
    static constexpr int kRequired[] = {
        CHORUS_A_VOLUME_NAME, CHORUS_A_BACKING_PATH, CHORUS_A_SIZE_BYTES, CHORUS_A_BLOCK_SIZE,
        CHORUS_A_UUID,        CHORUS_A_MINOR,        CHORUS_A_DISK_NAME,  CHORUS_A_STATE,
    };
    for (int type : kRequired)
        if (!a[type])
            throw Error("missing " + AttrName(type) + " in the volume message");
    if (ghdr.cmd == CHORUS_CMD_EVENT && !a[CHORUS_A_EVENT])
        throw Error("missing " + AttrName(CHORUS_A_EVENT) + " in the event message");

    VolumeInfo v;
    v.name =
        GetString(a[CHORUS_A_VOLUME_NAME], AttrName(CHORUS_A_VOLUME_NAME), CHORUS_VOLUME_NAME_MAX);
    v.backing_path = GetString(a[CHORUS_A_BACKING_PATH], AttrName(CHORUS_A_BACKING_PATH),
                               CHORUS_BACKING_PATH_MAX);
    v.size_bytes = GetScalar<uint64_t>(a[CHORUS_A_SIZE_BYTES], AttrName(CHORUS_A_SIZE_BYTES));
    v.block_size = GetScalar<uint32_t>(a[CHORUS_A_BLOCK_SIZE], AttrName(CHORUS_A_BLOCK_SIZE));
    v.uuid = GetScalar<Uuid>(a[CHORUS_A_UUID], AttrName(CHORUS_A_UUID));
    v.minor = GetScalar<uint32_t>(a[CHORUS_A_MINOR], AttrName(CHORUS_A_MINOR));
    v.disk_name =
        GetString(a[CHORUS_A_DISK_NAME], AttrName(CHORUS_A_DISK_NAME), CHORUS_DISK_NAME_MAX);
    v.state = GetScalar<uint32_t>(a[CHORUS_A_STATE], AttrName(CHORUS_A_STATE));
    if (a[CHORUS_A_OPEN_COUNT])
        v.open_count = GetScalar<uint32_t>(a[CHORUS_A_OPEN_COUNT], AttrName(CHORUS_A_OPEN_COUNT));
    if (a[CHORUS_A_STATS])
        v.stats = ParseStats(*a[CHORUS_A_STATS]);
    if (a[CHORUS_A_EVENT])
        v.event = GetScalar<uint32_t>(a[CHORUS_A_EVENT], AttrName(CHORUS_A_EVENT));
    return v;
}

NetlinkAck ParseAckMessage(std::span<const uint8_t> msg) {
    nlmsghdr nlh;
    Payload payload = CheckNetlinkHeader(msg, nlh);
    if (nlh.nlmsg_type != NLMSG_ERROR)
        throw Error("not a netlink error message (type " + std::to_string(nlh.nlmsg_type) + ")");
    if (payload.size() < sizeof(nlmsgerr))
        throw Error("truncated netlink error message");
    nlmsgerr err;
    std::memcpy(&err, payload.data(), sizeof(err));
    NetlinkAck ack;
    ack.errnum = -err.error;
    if (!(nlh.nlmsg_flags & NLM_F_ACK_TLVS))
        return ack;

    // The TLVs follow the echoed request: only its header when the ack was
    // capped (NETLINK_CAP_ACK), the whole request otherwise.
    size_t echoed = sizeof(nlmsgerr);
    if (!(nlh.nlmsg_flags & NLM_F_CAPPED) && err.msg.nlmsg_len > NLMSG_HDRLEN)
        echoed += err.msg.nlmsg_len - NLMSG_HDRLEN;
    echoed = NLMSG_ALIGN(echoed);
    if (echoed > payload.size())
        throw Error("truncated netlink error message (echoed request)");

    std::array<std::optional<Payload>, NLMSGERR_ATTR_MAX + 1> a;
    SplitAttributes(payload.subspan(echoed), a, "the extended ack");
    if (a[NLMSGERR_ATTR_MSG] && !a[NLMSGERR_ATTR_MSG]->empty()) {
        const Payload& p = *a[NLMSGERR_ATTR_MSG];
        // Up to the first NUL; tolerate a missing terminator.
        size_t n = 0;
        while (n < p.size() && p[n] != 0)
            n++;
        ack.extack.assign(reinterpret_cast<const char*>(p.data()), n);
    } else if (a[NLMSGERR_ATTR_MISS_TYPE] && a[NLMSGERR_ATTR_MISS_TYPE]->size() == 4) {
        uint32_t type;
        std::memcpy(&type, a[NLMSGERR_ATTR_MISS_TYPE]->data(), sizeof(type));
        ack.extack = "missing required attribute " + AttrName(static_cast<int>(type));
    }
    return ack;
}

}  // namespace chorus
