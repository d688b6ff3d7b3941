// Building chorus requests and parsing kernel replies, events and error
// acks, with message buffers made by libnl's own nlmsg API.
#include <gtest/gtest.h>

#include <cerrno>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include <linux/chorus.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>
#include <netlink/attr.h>
#include <netlink/genl/genl.h>
#include <netlink/msg.h>

#include "lib/errors.h"
#include "lib/genl_client.h"
#include "lib/genl_codec.h"

namespace chorus {
namespace {

constexpr int kFamily = 0x1d;

std::span<const uint8_t> Bytes(nl_msg* msg) {
    const nlmsghdr* nlh = nlmsg_hdr(msg);
    return {reinterpret_cast<const uint8_t*>(nlh), nlh->nlmsg_len};
}

std::vector<uint8_t> Copy(nl_msg* msg) {
    auto b = Bytes(msg);
    return {b.begin(), b.end()};
}

// Parses a request built by the library back into attributes, the way the
// kernel's policy would see them. tb points into the message, so a Parsed
// made from a temporary keeps that message alive in owned.
struct Parsed {
    genlmsghdr ghdr;
    nlattr* tb[CHORUS_A_MAX + 1];
    NlMsgPtr owned;
};

Parsed ParseRequest(nl_msg* msg) {
    Parsed p;
    nlmsghdr* nlh = nlmsg_hdr(msg);
    EXPECT_EQ(nlh->nlmsg_type, kFamily);
    std::memcpy(&p.ghdr, nlmsg_data(nlh), sizeof(p.ghdr));
    EXPECT_EQ(p.ghdr.version, CHORUS_GENL_VERSION);
    static nla_policy policy[CHORUS_A_MAX + 1];
    policy[CHORUS_A_VOLUME_NAME] = {NLA_STRING, 0, CHORUS_VOLUME_NAME_MAX};
    policy[CHORUS_A_BACKING_PATH] = {NLA_STRING, 0, CHORUS_BACKING_PATH_MAX};
    policy[CHORUS_A_SIZE_BYTES] = {NLA_U64, 0, 0};
    policy[CHORUS_A_BLOCK_SIZE] = {NLA_U32, 0, 0};
    policy[CHORUS_A_UUID] = {NLA_UNSPEC, CHORUS_UUID_LEN, CHORUS_UUID_LEN};
    policy[CHORUS_A_NODE_ID] = {NLA_U32, 0, 0};
    policy[CHORUS_A_ADDRESS] = {NLA_STRING, 0, CHORUS_ADDRESS_MAX};
    policy[CHORUS_A_PORT] = {NLA_U16, 0, 0};
    policy[CHORUS_A_TRANSPORT] = {NLA_U32, 0, 0};
    policy[CHORUS_A_NR_CONNS] = {NLA_U32, 0, 0};
    policy[CHORUS_A_ROLE] = {NLA_U32, 0, 0};
    policy[CHORUS_A_EPOCH] = {NLA_U64, 0, 0};
    policy[CHORUS_A_REQUEST_TIMEOUT_MS] = {NLA_U32, 0, 0};
    policy[CHORUS_A_PING_INTERVAL_MS] = {NLA_U32, 0, 0};
    policy[CHORUS_A_PING_TIMEOUT_MS] = {NLA_U32, 0, 0};
    policy[CHORUS_A_RESYNC_RATE] = {NLA_U64, 0, 0};
    policy[CHORUS_A_AUTO_DEGRADE] = {NLA_U8, 0, 0};
    policy[CHORUS_A_INITIAL_SYNC] = {NLA_U32, 0, 0};
    policy[CHORUS_A_DISK_TIMEOUT_MS] = {NLA_U32, 0, 0};
    EXPECT_EQ(genlmsg_parse(nlh, 0, p.tb, CHORUS_A_MAX, policy), 0);
    return p;
}

Parsed ParseRequest(NlMsgPtr msg) {
    Parsed p = ParseRequest(msg.get());
    p.owned = std::move(msg);
    return p;
}

// What a kernel reply looks like; fields can be left out or damaged.
struct ReplySpec {
    uint8_t cmd = CHORUS_CMD_VOLUME_GET;
    std::vector<int> omit;
    int short_attr = 0;         // put this attribute with too few bytes
    bool unterminated = false;  // put the name without its NUL
    bool stats = true;
    uint32_t event = 0;
};

NlMsgPtr MakeReply(const ReplySpec& spec) {
    NlMsgPtr msg(nlmsg_alloc());
    genlmsg_put(msg.get(), 0, 42, kFamily, 0, 0, spec.cmd, CHORUS_GENL_VERSION);
    auto want = [&](int type) {
        for (int t : spec.omit)
            if (t == type)
                return false;
        return true;
    };
    nl_msg* m = msg.get();
    if (want(CHORUS_A_VOLUME_NAME)) {
        if (spec.unterminated)
            nla_put(m, CHORUS_A_VOLUME_NAME, 4, "vol0");
        else
            nla_put_string(m, CHORUS_A_VOLUME_NAME, "vol0");
    }
    if (want(CHORUS_A_BACKING_PATH))
        nla_put_string(m, CHORUS_A_BACKING_PATH, "/dev/vdb");
    if (want(CHORUS_A_SIZE_BYTES)) {
        if (spec.short_attr == CHORUS_A_SIZE_BYTES)
            nla_put_u32(m, CHORUS_A_SIZE_BYTES, 1);
        else
            nla_put_u64(m, CHORUS_A_SIZE_BYTES, 1ull << 30);
    }
    if (want(CHORUS_A_BLOCK_SIZE)) {
        if (spec.short_attr == CHORUS_A_BLOCK_SIZE)
            nla_put_u16(m, CHORUS_A_BLOCK_SIZE, 4096);
        else
            nla_put_u32(m, CHORUS_A_BLOCK_SIZE, 4096);
    }
    if (want(CHORUS_A_UUID)) {
        uint8_t uuid[CHORUS_UUID_LEN];
        for (int i = 0; i < CHORUS_UUID_LEN; i++)
            uuid[i] = static_cast<uint8_t>(i + 1);
        nla_put(m, CHORUS_A_UUID, spec.short_attr == CHORUS_A_UUID ? 8 : CHORUS_UUID_LEN, uuid);
    }
    // An attribute from a newer kernel, and one beyond our CHORUS_A_MAX.
    nla_put_u32(m, CHORUS_A_MAX + 1, 7);
    nla_put_u32(m, 200, 7);
    if (want(CHORUS_A_MINOR))
        nla_put_u32(m, CHORUS_A_MINOR, 16);
    if (want(CHORUS_A_DISK_NAME))
        nla_put_string(m, CHORUS_A_DISK_NAME, "chorus1");
    if (want(CHORUS_A_STATE))
        nla_put_u32(m, CHORUS_A_STATE, CHORUS_VOLUME_STATE_ONLINE);
    if (want(CHORUS_A_OPEN_COUNT))
        nla_put_u32(m, CHORUS_A_OPEN_COUNT, 2);
    if (spec.event != 0)
        nla_put_u32(m, CHORUS_A_EVENT, spec.event);
    if (spec.stats) {
        nlattr* nest = nla_nest_start(m, CHORUS_A_STATS);
        nla_put_u64(m, CHORUS_STAT_READS, 10);
        nla_put_u64(m, CHORUS_STAT_READ_BYTES, 40960);
        nla_put_u64(m, CHORUS_STAT_WRITES, 20);
        nla_put_u64(m, CHORUS_STAT_WRITE_BYTES, 81920);
        nla_put_u64(m, CHORUS_STAT_FLUSHES, 3);
        nla_put_u64(m, CHORUS_STAT_FUA_WRITES, 4);
        nla_put_u64(m, CHORUS_STAT_DISCARDS, 5);
        nla_put_u64(m, CHORUS_STAT_WRITE_ZEROES, 6);
        nla_put_u64(m, CHORUS_STAT_ERRORS, 1);
        nla_put_u64(m, CHORUS_STAT_MAX + 1, 99);  // unknown counter
        nla_nest_end(m, nest);
    }
    return msg;
}

std::string ParseError(std::span<const uint8_t> bytes) {
    try {
        ParseVolumeMessage(bytes);
    } catch (const Error& e) {
        return e.what();
    }
    return "";
}

TEST(BuildRequest, CreateCarriesEveryGivenAttribute) {
    VolumeCreateRequest req;
    req.name = "vol0";
    req.backing_path = "/dev/vdb";
    req.size_bytes = 64ull << 20;
    req.block_size = 4096;
    req.uuid = ParseUuid("3f1c4b6e-0d2a-4b8e-9c1f-2a3b4c5d6e7f");
    NlMsgPtr msg = BuildVolumeCreate(kFamily, req);
    Parsed p = ParseRequest(msg.get());
    EXPECT_EQ(p.ghdr.cmd, CHORUS_CMD_VOLUME_CREATE);
    EXPECT_EQ(nlmsg_hdr(msg.get())->nlmsg_flags & NLM_F_DUMP, 0);
    ASSERT_NE(p.tb[CHORUS_A_VOLUME_NAME], nullptr);
    EXPECT_STREQ(nla_get_string(p.tb[CHORUS_A_VOLUME_NAME]), "vol0");
    EXPECT_STREQ(nla_get_string(p.tb[CHORUS_A_BACKING_PATH]), "/dev/vdb");
    EXPECT_EQ(nla_get_u64(p.tb[CHORUS_A_SIZE_BYTES]), 64ull << 20);
    EXPECT_EQ(nla_get_u32(p.tb[CHORUS_A_BLOCK_SIZE]), 4096u);
    ASSERT_EQ(nla_len(p.tb[CHORUS_A_UUID]), CHORUS_UUID_LEN);
    EXPECT_EQ(std::memcmp(nla_data(p.tb[CHORUS_A_UUID]), req.uuid->data(), CHORUS_UUID_LEN), 0);
}

TEST(BuildRequest, CreateOmitsDefaults) {
    VolumeCreateRequest req;
    req.name = "v";
    req.backing_path = "/dev/vdb";
    NlMsgPtr msg = BuildVolumeCreate(kFamily, req);
    Parsed p = ParseRequest(msg.get());
    EXPECT_NE(p.tb[CHORUS_A_VOLUME_NAME], nullptr);
    EXPECT_EQ(p.tb[CHORUS_A_SIZE_BYTES], nullptr);
    EXPECT_EQ(p.tb[CHORUS_A_BLOCK_SIZE], nullptr);
    EXPECT_EQ(p.tb[CHORUS_A_UUID], nullptr);
}

TEST(BuildRequest, DestroyGetAndDump) {
    NlMsgPtr destroy = BuildVolumeDestroy(kFamily, "vol0");
    Parsed d = ParseRequest(destroy.get());
    EXPECT_EQ(d.ghdr.cmd, CHORUS_CMD_VOLUME_DESTROY);
    EXPECT_STREQ(nla_get_string(d.tb[CHORUS_A_VOLUME_NAME]), "vol0");

    NlMsgPtr get = BuildVolumeGet(kFamily, "vol0");
    Parsed g = ParseRequest(get.get());
    EXPECT_EQ(g.ghdr.cmd, CHORUS_CMD_VOLUME_GET);
    EXPECT_STREQ(nla_get_string(g.tb[CHORUS_A_VOLUME_NAME]), "vol0");
    EXPECT_EQ(nlmsg_hdr(get.get())->nlmsg_flags & NLM_F_DUMP, 0);

    NlMsgPtr dump = BuildVolumeDump(kFamily);
    Parsed du = ParseRequest(dump.get());
    EXPECT_EQ(du.ghdr.cmd, CHORUS_CMD_VOLUME_GET);
    EXPECT_EQ(nlmsg_hdr(dump.get())->nlmsg_flags & NLM_F_DUMP, NLM_F_DUMP);
    EXPECT_EQ(du.tb[CHORUS_A_VOLUME_NAME], nullptr);
}

TEST(ParseVolume, RoundTripOfCreateAndReply) {
    // What chorusctl asks for ...
    VolumeCreateRequest req;
    req.name = "vol0";
    req.backing_path = "/dev/vdb";
    req.size_bytes = 1ull << 30;
    req.block_size = 4096;
    Parsed p = ParseRequest(BuildVolumeCreate(kFamily, req));
    // ... comes back in the kernel's reply.
    ReplySpec spec;
    spec.cmd = CHORUS_CMD_VOLUME_CREATE;
    NlMsgPtr reply = MakeReply(spec);
    VolumeInfo v = ParseVolumeMessage(Bytes(reply.get()));
    EXPECT_EQ(v.name, nla_get_string(p.tb[CHORUS_A_VOLUME_NAME]));
    EXPECT_EQ(v.backing_path, nla_get_string(p.tb[CHORUS_A_BACKING_PATH]));
    EXPECT_EQ(v.size_bytes, nla_get_u64(p.tb[CHORUS_A_SIZE_BYTES]));
    EXPECT_EQ(v.block_size, nla_get_u32(p.tb[CHORUS_A_BLOCK_SIZE]));
    EXPECT_EQ(FormatUuid(v.uuid), "01020304-0506-0708-090a-0b0c0d0e0f10");
    EXPECT_EQ(v.minor, 16u);
    EXPECT_EQ(v.disk_name, "chorus1");
    EXPECT_EQ(v.state, static_cast<uint32_t>(CHORUS_VOLUME_STATE_ONLINE));
    EXPECT_EQ(v.open_count, 2u);
    EXPECT_EQ(v.event, 0u);
    ASSERT_TRUE(v.stats.has_value());
    EXPECT_EQ(v.stats->reads, 10u);
    EXPECT_EQ(v.stats->read_bytes, 40960u);
    EXPECT_EQ(v.stats->writes, 20u);
    EXPECT_EQ(v.stats->write_bytes, 81920u);
    EXPECT_EQ(v.stats->flushes, 3u);
    EXPECT_EQ(v.stats->fua_writes, 4u);
    EXPECT_EQ(v.stats->discards, 5u);
    EXPECT_EQ(v.stats->write_zeroes, 6u);
    EXPECT_EQ(v.stats->errors, 1u);
}

TEST(ParseVolume, DiskAttachRequestAndReply) {
    NlMsgPtr attach = BuildDiskAttach(kFamily, "vol0", "/dev/mapper/new");
    Parsed p = ParseRequest(attach.get());
    EXPECT_EQ(p.ghdr.cmd, CHORUS_CMD_DISK_ATTACH);
    EXPECT_STREQ(nla_get_string(p.tb[CHORUS_A_VOLUME_NAME]), "vol0");
    EXPECT_STREQ(nla_get_string(p.tb[CHORUS_A_BACKING_PATH]), "/dev/mapper/new");
    // The kernel answers with the volume, as to GET.
    ReplySpec spec;
    spec.cmd = CHORUS_CMD_DISK_ATTACH;
    NlMsgPtr reply = MakeReply(spec);
    VolumeInfo v = ParseVolumeMessage(Bytes(reply.get()));
    EXPECT_EQ(v.disk_name, "chorus1");
}

TEST(ParseVolume, StatsAndOpenCountAreOptional) {
    ReplySpec spec;
    spec.stats = false;
    spec.omit = {CHORUS_A_OPEN_COUNT};
    NlMsgPtr reply = MakeReply(spec);
    VolumeInfo v = ParseVolumeMessage(Bytes(reply.get()));
    EXPECT_FALSE(v.stats.has_value());
    EXPECT_EQ(v.open_count, 0u);
}

TEST(ParseVolume, Event) {
    ReplySpec spec;
    spec.cmd = CHORUS_CMD_EVENT;
    spec.event = CHORUS_EVENT_VOLUME_STATE;
    NlMsgPtr msg = MakeReply(spec);
    VolumeInfo v = ParseVolumeMessage(Bytes(msg.get()));
    EXPECT_EQ(v.event, static_cast<uint32_t>(CHORUS_EVENT_VOLUME_STATE));
    EXPECT_EQ(EventName(v.event), "state");

    spec.event = 0;
    NlMsgPtr no_event = MakeReply(spec);
    EXPECT_NE(ParseError(Bytes(no_event.get())).find("missing CHORUS_A_EVENT"), std::string::npos);
}

class ParseVolumeMissing : public testing::TestWithParam<int> {};

TEST_P(ParseVolumeMissing, IsAnErrorNamingTheAttribute) {
    ReplySpec spec;
    spec.omit = {GetParam()};
    NlMsgPtr msg = MakeReply(spec);
    std::string err = ParseError(Bytes(msg.get()));
    EXPECT_EQ(err, "missing " + AttrName(GetParam()) + " in the volume message");
}

INSTANTIATE_TEST_SUITE_P(Required, ParseVolumeMissing,
                         testing::Values(CHORUS_A_VOLUME_NAME, CHORUS_A_BACKING_PATH,
                                         CHORUS_A_SIZE_BYTES, CHORUS_A_BLOCK_SIZE, CHORUS_A_UUID,
                                         CHORUS_A_MINOR, CHORUS_A_DISK_NAME, CHORUS_A_STATE),
                         [](const testing::TestParamInfo<int>& info) {
                             return AttrName(info.param);
                         });

TEST(ParseVolume, ShortAttributes) {
    for (int type : {CHORUS_A_SIZE_BYTES, CHORUS_A_BLOCK_SIZE, CHORUS_A_UUID}) {
        ReplySpec spec;
        spec.short_attr = type;
        NlMsgPtr msg = MakeReply(spec);
        std::string err = ParseError(Bytes(msg.get()));
        EXPECT_EQ(err.rfind(AttrName(type) + " has ", 0), 0u) << err;
    }
}

TEST(ParseVolume, UnterminatedString) {
    ReplySpec spec;
    spec.unterminated = true;
    NlMsgPtr msg = MakeReply(spec);
    EXPECT_EQ(ParseError(Bytes(msg.get())), "CHORUS_A_VOLUME_NAME is not a NUL-terminated string");
}

TEST(ParseVolume, TruncatedBuffers) {
    NlMsgPtr msg = MakeReply({});
    std::vector<uint8_t> full = Copy(msg.get());
    ASSERT_EQ(ParseError(full), "");
    // Buffer shorter than the header says.
    for (size_t len : {size_t{0}, size_t{3}, size_t{NLMSG_HDRLEN}, size_t{NLMSG_HDRLEN + 2},
                       full.size() / 2, full.size() - 1}) {
        std::span<const uint8_t> cut(full.data(), len);
        EXPECT_NE(ParseError(cut).find("truncated"), std::string::npos) << len;
    }
    // Header and buffer agree, but the last attribute is cut short.
    std::vector<uint8_t> cut = full;
    cut.resize(full.size() - 4);
    uint32_t len = static_cast<uint32_t>(cut.size());
    std::memcpy(cut.data(), &len, sizeof(len));
    EXPECT_NE(ParseError(cut).find("truncated attribute"), std::string::npos) << ParseError(cut);
    // Only the generic netlink header is missing its tail.
    std::vector<uint8_t> genl(full.begin(), full.begin() + NLMSG_HDRLEN + 2);
    len = static_cast<uint32_t>(genl.size());
    std::memcpy(genl.data(), &len, sizeof(len));
    EXPECT_EQ(ParseError(genl), "truncated generic netlink header");
}

TEST(ParseVolume, WrongCommand) {
    ReplySpec spec;
    spec.cmd = CHORUS_CMD_VOLUME_DESTROY;
    NlMsgPtr msg = MakeReply(spec);
    EXPECT_NE(ParseError(Bytes(msg.get())).find("unexpected chorus command"), std::string::npos);
}

// An NLMSG_ERROR as the kernel sends it with NETLINK_EXT_ACK.
NlMsgPtr MakeAck(int error, const char* extack, bool capped, int miss_type = -1) {
    NlMsgPtr request = BuildVolumeGet(kFamily, "vol0");
    nlmsghdr* req = nlmsg_hdr(request.get());
    int flags = (extack != nullptr || miss_type >= 0) ? NLM_F_ACK_TLVS : 0;
    if (capped)
        flags |= NLM_F_CAPPED;
    NlMsgPtr msg(nlmsg_alloc_simple(NLMSG_ERROR, flags));
    nlmsgerr err{};
    err.error = error;
    err.msg = *req;
    nlmsg_append(msg.get(), &err, sizeof(err), NLMSG_ALIGNTO);
    if (!capped)
        nlmsg_append(msg.get(), nlmsg_data(req), nlmsg_datalen(req), NLMSG_ALIGNTO);
    if (extack != nullptr)
        nla_put_string(msg.get(), NLMSGERR_ATTR_MSG, extack);
    if (miss_type >= 0)
        nla_put_u32(msg.get(), NLMSGERR_ATTR_MISS_TYPE, static_cast<uint32_t>(miss_type));
    return msg;
}

TEST(ParseAck, ExtackMessageCappedAndNot) {
    for (bool capped : {true, false}) {
        NlMsgPtr msg = MakeAck(-EBUSY, "backing device /dev/vdb is in use", capped);
        NetlinkAck ack = ParseAckMessage(Bytes(msg.get()));
        EXPECT_EQ(ack.errnum, EBUSY);
        EXPECT_EQ(ack.extack, "backing device /dev/vdb is in use");
    }
}

TEST(ParseAck, PlainErrorAndPlainAck) {
    NlMsgPtr err = MakeAck(-ENOENT, nullptr, false);
    NetlinkAck a = ParseAckMessage(Bytes(err.get()));
    EXPECT_EQ(a.errnum, ENOENT);
    EXPECT_EQ(a.extack, "");
    NlMsgPtr ok = MakeAck(0, nullptr, true);
    EXPECT_EQ(ParseAckMessage(Bytes(ok.get())).errnum, 0);
}

TEST(ParseAck, MissingAttributeType) {
    NlMsgPtr msg = MakeAck(-EINVAL, nullptr, true, CHORUS_A_BACKING_PATH);
    EXPECT_EQ(ParseAckMessage(Bytes(msg.get())).extack,
              "missing required attribute CHORUS_A_BACKING_PATH");
}

TEST(ParseAck, ErrorInsteadOfVolumeThrowsNetlinkError) {
    NlMsgPtr msg = MakeAck(-EBUSY, "backing device /dev/vdb is in use", true);
    try {
        ParseVolumeMessage(Bytes(msg.get()));
        FAIL();
    } catch (const NetlinkError& e) {
        EXPECT_EQ(e.errnum(), EBUSY);
        EXPECT_EQ(e.extack(), "backing device /dev/vdb is in use");
        EXPECT_STREQ(e.what(), "backing device /dev/vdb is in use (EBUSY)");
    }
}

TEST(EventErrors, OnlyLostAndMalformedEventsAreRecoverable) {
    EXPECT_TRUE(IsRecoverableEventError(Error("events were lost", ENOBUFS)));
    EXPECT_TRUE(IsRecoverableEventError(Error("missing CHORUS_A_STATE", EBADMSG)));
    EXPECT_FALSE(IsRecoverableEventError(Error("poll on the event socket", EBADF)));
    EXPECT_FALSE(IsRecoverableEventError(Error("cannot receive events", EIO)));
    EXPECT_FALSE(IsRecoverableEventError(Error("no errno")));
    EXPECT_FALSE(IsRecoverableEventError(NetlinkError(ENOBUFS, "")));
}

TEST(ParseAck, Malformed) {
    NlMsgPtr reply = MakeReply({});
    EXPECT_THROW(ParseAckMessage(Bytes(reply.get())), Error);  // not an error message
    NlMsgPtr msg = MakeAck(-EBUSY, "x", false);
    std::vector<uint8_t> b = Copy(msg.get());
    std::span<const uint8_t> cut(b.data(), NLMSG_HDRLEN + 8);
    EXPECT_THROW(ParseAckMessage(cut), Error);
}

TEST(Names, StatesEventsAttributes) {
    EXPECT_EQ(VolumeStateName(CHORUS_VOLUME_STATE_ONLINE), "online");
    EXPECT_EQ(VolumeStateName(CHORUS_VOLUME_STATE_FAILED), "failed");
    EXPECT_EQ(VolumeStateName(77), "unknown(77)");
    EXPECT_EQ(EventName(CHORUS_EVENT_VOLUME_CREATED), "created");
    EXPECT_EQ(EventName(CHORUS_EVENT_VOLUME_DESTROYED), "destroyed");
    EXPECT_EQ(AttrName(CHORUS_A_STATS), "CHORUS_A_STATS");
    EXPECT_EQ(AttrName(CHORUS_A_MAX + 1), "attribute " + std::to_string(CHORUS_A_MAX + 1));
}

// Replication: requests carry exactly the attributes their command takes,
// since the kernel's strict policies refuse any other.

std::vector<int> Present(const Parsed& p) {
    std::vector<int> types;
    for (int t = 1; t <= CHORUS_A_MAX; t++)
        if (p.tb[t] != nullptr)
            types.push_back(t);
    return types;
}

TEST(BuildRequest, CreateCarriesNodeIdWhenGiven) {
    VolumeCreateRequest req;
    req.name = "vol0";
    req.backing_path = "/dev/vdb";
    req.node_id = 3;
    Parsed p = ParseRequest(BuildVolumeCreate(kFamily, req));
    ASSERT_NE(p.tb[CHORUS_A_NODE_ID], nullptr);
    EXPECT_EQ(nla_get_u32(p.tb[CHORUS_A_NODE_ID]), 3u);

    req.node_id.reset();
    Parsed q = ParseRequest(BuildVolumeCreate(kFamily, req));
    EXPECT_EQ(q.tb[CHORUS_A_NODE_ID], nullptr);
}

TEST(BuildRequest, ListenAndUnlisten) {
    ListenRequest req;
    req.address = "fd00::1";
    NlMsgPtr msg = BuildListen(kFamily, req);
    Parsed p = ParseRequest(msg.get());
    EXPECT_EQ(p.ghdr.cmd, CHORUS_CMD_LISTEN);
    EXPECT_EQ(Present(p), (std::vector<int>{CHORUS_A_ADDRESS, CHORUS_A_PORT}));
    EXPECT_STREQ(nla_get_string(p.tb[CHORUS_A_ADDRESS]), "fd00::1");
    ASSERT_EQ(nla_len(p.tb[CHORUS_A_PORT]), 2);
    EXPECT_EQ(nla_get_u16(p.tb[CHORUS_A_PORT]), CHORUS_DEFAULT_PORT);

    req.port = 7000;
    Parsed q = ParseRequest(BuildListen(kFamily, req));
    EXPECT_EQ(nla_get_u16(q.tb[CHORUS_A_PORT]), 7000);

    Parsed u = ParseRequest(BuildUnlisten(kFamily));
    EXPECT_EQ(u.ghdr.cmd, CHORUS_CMD_UNLISTEN);
    EXPECT_TRUE(Present(u).empty());
}

TEST(BuildRequest, PeerAddCarriesEveryGivenAttribute) {
    PeerAddRequest req;
    req.volume = "vol0";
    req.node_id = 2;
    req.address = "10.0.0.2";
    req.port = 7789;
    req.transport = CHORUS_TRANSPORT_RDMA;
    req.nr_conns = 4;
    req.initial_sync = CHORUS_INITIAL_SYNC_NONE;
    Parsed p = ParseRequest(BuildPeerAdd(kFamily, req));
    EXPECT_EQ(p.ghdr.cmd, CHORUS_CMD_PEER_ADD);
    EXPECT_EQ(Present(p), (std::vector<int>{CHORUS_A_VOLUME_NAME, CHORUS_A_NODE_ID,
                                            CHORUS_A_ADDRESS, CHORUS_A_PORT, CHORUS_A_TRANSPORT,
                                            CHORUS_A_NR_CONNS, CHORUS_A_INITIAL_SYNC}));
    EXPECT_STREQ(nla_get_string(p.tb[CHORUS_A_VOLUME_NAME]), "vol0");
    EXPECT_EQ(nla_get_u32(p.tb[CHORUS_A_NODE_ID]), 2u);
    EXPECT_STREQ(nla_get_string(p.tb[CHORUS_A_ADDRESS]), "10.0.0.2");
    EXPECT_EQ(nla_get_u16(p.tb[CHORUS_A_PORT]), 7789);
    EXPECT_EQ(nla_get_u32(p.tb[CHORUS_A_TRANSPORT]), static_cast<uint32_t>(CHORUS_TRANSPORT_RDMA));
    EXPECT_EQ(nla_get_u32(p.tb[CHORUS_A_NR_CONNS]), 4u);
    EXPECT_EQ(nla_get_u32(p.tb[CHORUS_A_INITIAL_SYNC]),
              static_cast<uint32_t>(CHORUS_INITIAL_SYNC_NONE));
}

TEST(BuildRequest, PeerAddLeavesConnsAndInitialSyncToTheKernel) {
    PeerAddRequest req;
    req.volume = "vol0";
    req.node_id = 2;
    req.address = "10.0.0.2";
    Parsed p = ParseRequest(BuildPeerAdd(kFamily, req));
    EXPECT_EQ(p.tb[CHORUS_A_NR_CONNS], nullptr);
    EXPECT_EQ(p.tb[CHORUS_A_INITIAL_SYNC], nullptr);
    EXPECT_EQ(nla_get_u16(p.tb[CHORUS_A_PORT]), CHORUS_DEFAULT_PORT);
    EXPECT_EQ(nla_get_u32(p.tb[CHORUS_A_TRANSPORT]), static_cast<uint32_t>(CHORUS_TRANSPORT_TCP));
}

TEST(BuildRequest, PeerAddSendsRdmaWithTcpFallback) {
    PeerAddRequest req;
    req.volume = "vol0";
    req.node_id = 2;
    req.address = "10.0.0.2";
    req.transport = ParseTransport("rdma+tcp");
    Parsed p = ParseRequest(BuildPeerAdd(kFamily, req));
    EXPECT_EQ(nla_get_u32(p.tb[CHORUS_A_TRANSPORT]),
              static_cast<uint32_t>(CHORUS_TRANSPORT_RDMA_TCP));
}

class BuildPeerCommandTest : public testing::TestWithParam<int> {};

TEST_P(BuildPeerCommandTest, CarriesVolumeAndNodeIdOnly) {
    NlMsgPtr msg = BuildPeerCommand(kFamily, static_cast<uint8_t>(GetParam()), "vol0", 32);
    Parsed p = ParseRequest(msg.get());
    EXPECT_EQ(p.ghdr.cmd, GetParam());
    EXPECT_EQ(Present(p), (std::vector<int>{CHORUS_A_VOLUME_NAME, CHORUS_A_NODE_ID}));
    EXPECT_STREQ(nla_get_string(p.tb[CHORUS_A_VOLUME_NAME]), "vol0");
    EXPECT_EQ(nla_get_u32(p.tb[CHORUS_A_NODE_ID]), 32u);
    EXPECT_EQ(nlmsg_hdr(msg.get())->nlmsg_flags & NLM_F_DUMP, 0);
}

INSTANTIATE_TEST_SUITE_P(Commands, BuildPeerCommandTest,
                         testing::Values(CHORUS_CMD_PEER_DEL, CHORUS_CMD_PEER_CONNECT,
                                         CHORUS_CMD_PEER_DISCONNECT, CHORUS_CMD_WRITESET_REMOVE,
                                         CHORUS_CMD_VERIFY_START),
                         [](const testing::TestParamInfo<int>& info) {
                             return CommandName(info.param);
                         });

TEST(BuildRequest, PeerCommandRefusesOtherCommands) {
    for (int cmd :
         {int{CHORUS_CMD_PEER_ADD}, int{CHORUS_CMD_VOLUME_GET}, int{CHORUS_CMD_SET_ROLE}, 200})
        EXPECT_THROW(BuildPeerCommand(kFamily, static_cast<uint8_t>(cmd), "vol0", 2), Error) << cmd;
}

TEST(BuildRequest, SetRole) {
    SetRoleRequest owner;
    owner.volume = "vol0";
    owner.role = CHORUS_ROLE_OWNER;
    owner.epoch = 1ull << 40;
    Parsed p = ParseRequest(BuildSetRole(kFamily, owner));
    EXPECT_EQ(p.ghdr.cmd, CHORUS_CMD_SET_ROLE);
    EXPECT_EQ(Present(p), (std::vector<int>{CHORUS_A_VOLUME_NAME, CHORUS_A_ROLE, CHORUS_A_EPOCH}));
    EXPECT_EQ(nla_get_u32(p.tb[CHORUS_A_ROLE]), static_cast<uint32_t>(CHORUS_ROLE_OWNER));
    EXPECT_EQ(nla_get_u64(p.tb[CHORUS_A_EPOCH]), 1ull << 40);

    SetRoleRequest replica;
    replica.volume = "vol0";
    replica.role = CHORUS_ROLE_REPLICA;
    Parsed q = ParseRequest(BuildSetRole(kFamily, replica));
    EXPECT_EQ(Present(q), (std::vector<int>{CHORUS_A_VOLUME_NAME, CHORUS_A_ROLE}));
    EXPECT_EQ(nla_get_u32(q.tb[CHORUS_A_ROLE]), static_cast<uint32_t>(CHORUS_ROLE_REPLICA));
}

TEST(BuildRequest, VolumeSetSendsOnlyWhatIsGiven) {
    VolumeSetRequest req;
    req.volume = "vol0";
    EXPECT_TRUE(req.empty());
    req.resync_rate = 0;  // "no limit" is a value, not an absence
    req.auto_degrade = false;
    EXPECT_FALSE(req.empty());
    Parsed p = ParseRequest(BuildVolumeSet(kFamily, req));
    EXPECT_EQ(p.ghdr.cmd, CHORUS_CMD_VOLUME_SET);
    EXPECT_EQ(Present(p), (std::vector<int>{CHORUS_A_VOLUME_NAME, CHORUS_A_RESYNC_RATE,
                                            CHORUS_A_AUTO_DEGRADE}));
    EXPECT_EQ(nla_get_u64(p.tb[CHORUS_A_RESYNC_RATE]), 0u);
    ASSERT_EQ(nla_len(p.tb[CHORUS_A_AUTO_DEGRADE]), 1);
    EXPECT_EQ(nla_get_u8(p.tb[CHORUS_A_AUTO_DEGRADE]), 0);

    req.request_timeout_ms = 30000;
    req.ping_interval_ms = 500;
    req.ping_timeout_ms = 2500;
    req.resync_rate = 10ull << 20;
    req.auto_degrade = true;
    Parsed q = ParseRequest(BuildVolumeSet(kFamily, req));
    EXPECT_EQ(Present(q).size(), 6u);
    EXPECT_EQ(nla_get_u32(q.tb[CHORUS_A_REQUEST_TIMEOUT_MS]), 30000u);
    EXPECT_EQ(nla_get_u32(q.tb[CHORUS_A_PING_INTERVAL_MS]), 500u);
    EXPECT_EQ(nla_get_u32(q.tb[CHORUS_A_PING_TIMEOUT_MS]), 2500u);
    EXPECT_EQ(nla_get_u64(q.tb[CHORUS_A_RESYNC_RATE]), 10ull << 20);
    EXPECT_EQ(nla_get_u8(q.tb[CHORUS_A_AUTO_DEGRADE]), 1);
}

TEST(BuildRequest, VolumeSetSendsTheDiskTimeoutZeroIncluded) {
    VolumeSetRequest req;
    req.volume = "vol0";
    req.disk_timeout_ms = 0;  // "no limit" is a value, not an absence
    EXPECT_FALSE(req.empty());
    Parsed p = ParseRequest(BuildVolumeSet(kFamily, req));
    EXPECT_EQ(Present(p), (std::vector<int>{CHORUS_A_VOLUME_NAME, CHORUS_A_DISK_TIMEOUT_MS}));
    EXPECT_EQ(nla_get_u32(p.tb[CHORUS_A_DISK_TIMEOUT_MS]), 0u);
}

TEST(ParseVolume, FailedDiskAndAPeerWhoseDiskFailed) {
    NlMsgPtr msg = MakeReply({});
    nl_msg* m = msg.get();
    nla_put_u32(m, CHORUS_A_DISK_TIMEOUT_MS, 5000);
    nla_put_string(m, CHORUS_A_DISK_ERROR, "write failed (-5)");
    nla_put_u64(m, CHORUS_A_DISK_FAILED_AT, 1795761600);
    nlattr* peers = nla_nest_start(m, CHORUS_A_PEERS);
    nlattr* peer = nla_nest_start(m, CHORUS_A_PEER);
    nla_put_u32(m, CHORUS_PEER_A_NODE_ID, 2);
    nla_put_u8(m, CHORUS_PEER_A_DISK_FAILED, 1);
    nla_nest_end(m, peer);
    nla_nest_end(m, peers);
    VolumeInfo v = ParseVolumeMessage(Bytes(m));
    EXPECT_EQ(v.disk_timeout_ms, 5000u);
    EXPECT_EQ(v.disk_error, "write failed (-5)");
    EXPECT_EQ(v.disk_failed_at, 1795761600u);
    ASSERT_EQ(v.peers.size(), 1u);
    EXPECT_EQ(v.peers[0].disk_failed, true);

    // A healthy volume of an older module says nothing of its disk.
    VolumeInfo plain = ParseVolumeMessage(Bytes(MakeReply({}).get()));
    EXPECT_FALSE(plain.disk_timeout_ms || plain.disk_error || plain.disk_failed_at);
}

// One peer nest as the kernel would fill it; full=false sends only some.
void PutPeer(nl_msg* m, int type, uint32_t node_id, bool full) {
    nlattr* nest = nla_nest_start(m, type);
    nla_put_u32(m, CHORUS_PEER_A_NODE_ID, node_id);
    nla_put_u32(m, CHORUS_PEER_A_CONN_STATE, CHORUS_CONN_CONNECTED);
    if (full) {
        nla_put_string(m, CHORUS_PEER_A_ADDRESS, "fd00::2");
        nla_put_u16(m, CHORUS_PEER_A_PORT, 7789);
        nla_put_u32(m, CHORUS_PEER_A_TRANSPORT, CHORUS_TRANSPORT_TCP);
        nla_put_u32(m, CHORUS_PEER_A_NR_CONNS, 2);
        nla_put_u32(m, CHORUS_PEER_A_REPL_STATE, CHORUS_REPL_SYNCING);
        nla_put_u8(m, CHORUS_PEER_A_IN_WRITESET, 1);
        nla_put_u32(m, CHORUS_PEER_A_ROLE, CHORUS_ROLE_REPLICA);
        nla_put_u64(m, CHORUS_PEER_A_DIRTY_BYTES, 3ull << 20);
        nla_put_u64(m, CHORUS_PEER_A_SYNC_TOTAL_BYTES, 4ull << 20);
        nla_put_u64(m, CHORUS_PEER_A_SYNC_DONE_BYTES, 1ull << 20);
        nla_put_u64(m, CHORUS_PEER_A_SYNC_RATE, 512 << 10);
        nla_put_u64(m, CHORUS_PEER_A_WRITES_SENT, 11);
        nla_put_u64(m, CHORUS_PEER_A_BYTES_SENT, 45056);
        nla_put_u32(m, CHORUS_PEER_A_HELD, 5);
        nla_put_u64(m, CHORUS_PEER_A_RECONNECTS, 2);
        nla_put_u64(m, CHORUS_PEER_A_RESYNCED_BYTES, 1ull << 20);
        nla_put_u64(m, CHORUS_PEER_A_VERIFY_DONE_BYTES, 8192);
        nla_put_u64(m, CHORUS_PEER_A_VERIFY_MISMATCHES, 1);
        nla_put_u8(m, CHORUS_PEER_A_VERIFY_RUNNING, 1);
        nla_put_string(m, CHORUS_PEER_A_LAST_ERROR, "connection reset by peer");
        nla_put_u64(m, CHORUS_PEER_A_MAX + 1, 99);  // from a newer kernel
    }
    nla_nest_end(m, nest);
}

// A GET reply with every replication attribute and two peers.
NlMsgPtr MakeReplicatedReply(uint8_t cmd = CHORUS_CMD_VOLUME_GET, uint32_t event = 0) {
    ReplySpec spec;
    spec.cmd = cmd;
    spec.event = event;
    NlMsgPtr msg = MakeReply(spec);
    nl_msg* m = msg.get();
    nla_put_u32(m, CHORUS_A_NODE_ID, 1);
    nla_put_u32(m, CHORUS_A_ROLE, CHORUS_ROLE_OWNER);
    nla_put_u64(m, CHORUS_A_EPOCH, 7);
    nla_put_u32(m, CHORUS_A_REQUEST_TIMEOUT_MS, 10000);
    nla_put_u32(m, CHORUS_A_PING_INTERVAL_MS, 1000);
    nla_put_u32(m, CHORUS_A_PING_TIMEOUT_MS, 5000);
    nla_put_u64(m, CHORUS_A_RESYNC_RATE, 100ull << 20);
    nla_put_u8(m, CHORUS_A_AUTO_DEGRADE, 0);
    nlattr* peers = nla_nest_start(m, CHORUS_A_PEERS);
    PutPeer(m, CHORUS_A_PEER, 2, true);
    PutPeer(m, CHORUS_A_PEER, 3, false);
    nla_nest_end(m, peers);
    return msg;
}

TEST(ParseVolume, ReplicationAttributes) {
    NlMsgPtr msg = MakeReplicatedReply();
    VolumeInfo v = ParseVolumeMessage(Bytes(msg.get()));
    EXPECT_EQ(v.node_id, 1u);
    EXPECT_EQ(v.role, static_cast<uint32_t>(CHORUS_ROLE_OWNER));
    EXPECT_EQ(v.epoch, 7u);
    EXPECT_EQ(v.request_timeout_ms, 10000u);
    EXPECT_EQ(v.ping_interval_ms, 1000u);
    EXPECT_EQ(v.ping_timeout_ms, 5000u);
    EXPECT_EQ(v.resync_rate, 100ull << 20);
    EXPECT_EQ(v.auto_degrade, false);
    EXPECT_FALSE(v.peer.has_value());
    EXPECT_FALSE(v.reason.has_value());
    ASSERT_EQ(v.peers.size(), 2u);

    const PeerInfo& p = v.peers[0];
    EXPECT_EQ(p.node_id, 2u);
    EXPECT_EQ(p.address, "fd00::2");
    EXPECT_EQ(p.port, 7789);
    EXPECT_EQ(p.transport, static_cast<uint32_t>(CHORUS_TRANSPORT_TCP));
    EXPECT_EQ(p.nr_conns, 2u);
    EXPECT_EQ(p.conn_state, static_cast<uint32_t>(CHORUS_CONN_CONNECTED));
    EXPECT_EQ(p.repl_state, static_cast<uint32_t>(CHORUS_REPL_SYNCING));
    EXPECT_EQ(p.in_writeset, true);
    EXPECT_EQ(p.role, static_cast<uint32_t>(CHORUS_ROLE_REPLICA));
    EXPECT_EQ(p.dirty_bytes, 3ull << 20);
    EXPECT_EQ(p.sync_total_bytes, 4ull << 20);
    EXPECT_EQ(p.sync_done_bytes, 1ull << 20);
    EXPECT_EQ(p.sync_rate, 512u << 10);
    EXPECT_EQ(p.writes_sent, 11u);
    EXPECT_EQ(p.bytes_sent, 45056u);
    EXPECT_EQ(p.held, 5u);
    EXPECT_EQ(p.reconnects, 2u);
    EXPECT_EQ(p.resynced_bytes, 1ull << 20);
    EXPECT_EQ(p.verify_done_bytes, 8192u);
    EXPECT_EQ(p.verify_mismatches, 1u);
    EXPECT_EQ(p.verify_running, true);
    EXPECT_EQ(p.last_error, "connection reset by peer");

    // The second peer sent only its id and connection state.
    const PeerInfo& q = v.peers[1];
    EXPECT_EQ(q.node_id, 3u);
    EXPECT_EQ(q.conn_state, static_cast<uint32_t>(CHORUS_CONN_CONNECTED));
    EXPECT_FALSE(q.address || q.port || q.transport || q.nr_conns || q.repl_state ||
                 q.in_writeset || q.role || q.dirty_bytes || q.sync_total_bytes ||
                 q.sync_done_bytes || q.sync_rate || q.writes_sent || q.bytes_sent || q.held ||
                 q.reconnects || q.resynced_bytes || q.verify_done_bytes || q.verify_mismatches ||
                 q.verify_running || q.last_error || q.active_transport);
    EXPECT_TRUE(q.paths.empty());
    EXPECT_TRUE(p.paths.empty());
}

// One CHORUS_PEER_A_PATH nest as the kernel would fill it.
void PutPath(nl_msg* m, uint32_t transport, bool active, uint64_t sessions, uint64_t failures,
             uint64_t msgs, uint64_t bytes, const char* last_error) {
    nlattr* nest = nla_nest_start(m, CHORUS_PEER_A_PATH);
    nla_put_u32(m, CHORUS_PATH_A_TRANSPORT, transport);
    nla_put_u8(m, CHORUS_PATH_A_ACTIVE, active ? 1 : 0);
    nla_put(m, CHORUS_PATH_A_PAD, 0, nullptr);  // as nla_put_u64_64bit may add
    nla_put_u64(m, CHORUS_PATH_A_SESSIONS, sessions);
    nla_put_u64(m, CHORUS_PATH_A_FAILURES, failures);
    nla_put_u64(m, CHORUS_PATH_A_MSGS_SENT, msgs);
    nla_put_u64(m, CHORUS_PATH_A_BYTES_SENT, bytes);
    nla_put_string(m, CHORUS_PATH_A_LAST_ERROR, last_error);
    nla_put_u32(m, CHORUS_PATH_A_MAX + 1, 7);  // from a newer kernel
    nla_nest_end(m, nest);
}

TEST(ParseVolume, PeerWithTwoPathsAndTheActiveTransport) {
    NlMsgPtr msg = MakeReply({});
    nl_msg* m = msg.get();
    nlattr* peers = nla_nest_start(m, CHORUS_A_PEERS);
    nlattr* peer = nla_nest_start(m, CHORUS_A_PEER);
    nla_put_u32(m, CHORUS_PEER_A_NODE_ID, 2);
    nla_put_u32(m, CHORUS_PEER_A_TRANSPORT, CHORUS_TRANSPORT_RDMA_TCP);
    PutPath(m, CHORUS_TRANSPORT_RDMA, false, 3, 1, 1200, 48ull << 20, "route resolution timed out");
    nla_put_u32(m, CHORUS_PEER_A_ACTIVE_TRANSPORT, CHORUS_TRANSPORT_TCP);
    PutPath(m, CHORUS_TRANSPORT_TCP, true, 1, 0, 5, 4096, "");
    nla_put_u64(m, CHORUS_PEER_A_MAX + 1, 99);  // from a newer kernel
    nla_nest_end(m, peer);
    PutPeer(m, CHORUS_A_PEER, 3, false);
    nla_nest_end(m, peers);

    VolumeInfo v = ParseVolumeMessage(Bytes(m));
    ASSERT_EQ(v.peers.size(), 2u);
    const PeerInfo& p = v.peers[0];
    EXPECT_EQ(p.node_id, 2u);
    EXPECT_EQ(p.transport, static_cast<uint32_t>(CHORUS_TRANSPORT_RDMA_TCP));
    EXPECT_EQ(p.active_transport, static_cast<uint32_t>(CHORUS_TRANSPORT_TCP));
    ASSERT_EQ(p.paths.size(), 2u);  // both, in the kernel's order
    const PathInfo& rdma = p.paths[0];
    EXPECT_EQ(rdma.transport, static_cast<uint32_t>(CHORUS_TRANSPORT_RDMA));
    EXPECT_EQ(rdma.active, false);
    EXPECT_EQ(rdma.sessions, 3u);
    EXPECT_EQ(rdma.failures, 1u);
    EXPECT_EQ(rdma.msgs_sent, 1200u);
    EXPECT_EQ(rdma.bytes_sent, 48ull << 20);
    EXPECT_EQ(rdma.last_error, "route resolution timed out");
    const PathInfo& tcp = p.paths[1];
    EXPECT_EQ(tcp.transport, static_cast<uint32_t>(CHORUS_TRANSPORT_TCP));
    EXPECT_EQ(tcp.active, true);
    EXPECT_EQ(tcp.sessions, 1u);
    EXPECT_EQ(tcp.failures, 0u);
    EXPECT_EQ(tcp.msgs_sent, 5u);
    EXPECT_EQ(tcp.bytes_sent, 4096u);
    EXPECT_FALSE(tcp.last_error.has_value());  // empty counts as absent

    // The next peer's paths are its own (none).
    EXPECT_EQ(v.peers[1].node_id, 3u);
    EXPECT_TRUE(v.peers[1].paths.empty());
    EXPECT_FALSE(v.peers[1].active_transport.has_value());
}

TEST(ParseVolume, NoSessionAndAPathWithOnlyItsTransport) {
    ReplySpec spec;
    spec.cmd = CHORUS_CMD_EVENT;
    spec.event = CHORUS_EVENT_PEER_STATE;
    NlMsgPtr msg = MakeReply(spec);
    nl_msg* m = msg.get();
    nlattr* peer = nla_nest_start(m, CHORUS_A_PEER);
    nla_put_u32(m, CHORUS_PEER_A_NODE_ID, 2);
    nla_put_u32(m, CHORUS_PEER_A_ACTIVE_TRANSPORT, CHORUS_TRANSPORT_UNSPEC);
    nlattr* path = nla_nest_start(m, CHORUS_PEER_A_PATH);
    nla_put_u32(m, CHORUS_PATH_A_TRANSPORT, CHORUS_TRANSPORT_RDMA);
    nla_nest_end(m, path);
    nla_nest_end(m, peer);
    VolumeInfo v = ParseVolumeMessage(Bytes(m));
    ASSERT_TRUE(v.peer.has_value());
    EXPECT_EQ(v.peer->active_transport, static_cast<uint32_t>(CHORUS_TRANSPORT_UNSPEC));
    ASSERT_EQ(v.peer->paths.size(), 1u);
    const PathInfo& p = v.peer->paths[0];
    EXPECT_EQ(p.transport, static_cast<uint32_t>(CHORUS_TRANSPORT_RDMA));
    EXPECT_FALSE(p.active || p.sessions || p.failures || p.msgs_sent || p.bytes_sent ||
                 p.last_error);
}

TEST(ParseVolume, MalformedPaths) {
    auto parse_peer = [](const std::function<void(nl_msg*)>& fill) {
        NlMsgPtr msg = MakeReply({});
        nlattr* peer = nla_nest_start(msg.get(), CHORUS_A_PEER);
        fill(msg.get());
        nla_nest_end(msg.get(), peer);
        return ParseError(Bytes(msg.get()));
    };
    // A counter as u32 instead of u64.
    std::string error = parse_peer([](nl_msg* m) {
        nlattr* path = nla_nest_start(m, CHORUS_PEER_A_PATH);
        nla_put_u32(m, CHORUS_PATH_A_SESSIONS, 3);
        nla_nest_end(m, path);
    });
    EXPECT_EQ(error, "CHORUS_PATH_A_SESSIONS has 4 bytes, expected 8");
    // A last error without its NUL.
    error = parse_peer([](nl_msg* m) {
        nlattr* path = nla_nest_start(m, CHORUS_PEER_A_PATH);
        nla_put(m, CHORUS_PATH_A_LAST_ERROR, 3, "abc");
        nla_nest_end(m, path);
    });
    EXPECT_EQ(error, "CHORUS_PATH_A_LAST_ERROR is not a NUL-terminated string");
    // A path that is not an attribute stream.
    error = parse_peer([](nl_msg* m) {
        uint8_t junk[6] = {0xff, 0xff, 0, 0, 0, 0};
        nla_put(m, CHORUS_PEER_A_PATH, sizeof(junk), junk);
    });
    EXPECT_NE(error.find("in CHORUS_PEER_A_PATH"), std::string::npos) << error;
    // The active transport as u8.
    error = parse_peer([](nl_msg* m) { nla_put_u8(m, CHORUS_PEER_A_ACTIVE_TRANSPORT, 1); });
    EXPECT_EQ(error, "CHORUS_PEER_A_ACTIVE_TRANSPORT has 1 bytes, expected 4");
}

TEST(ParseVolume, ReplicationAttributesAreOptional) {
    // What a module without replication sends.
    NlMsgPtr msg = MakeReply({});
    VolumeInfo v = ParseVolumeMessage(Bytes(msg.get()));
    EXPECT_FALSE(v.node_id || v.role || v.epoch || v.request_timeout_ms || v.ping_interval_ms ||
                 v.ping_timeout_ms || v.resync_rate || v.auto_degrade || v.peer || v.reason);
    EXPECT_TRUE(v.peers.empty());
    ASSERT_TRUE(v.stats.has_value());
    EXPECT_EQ(v.stats->stale_epoch, 0u);
}

TEST(ParseVolume, StaleEpochCounter) {
    ReplySpec spec;
    spec.stats = false;
    NlMsgPtr msg = MakeReply(spec);
    nlattr* nest = nla_nest_start(msg.get(), CHORUS_A_STATS);
    nla_put_u64(msg.get(), CHORUS_STAT_STALE_EPOCH, 12);
    nla_nest_end(msg.get(), nest);
    VolumeInfo v = ParseVolumeMessage(Bytes(msg.get()));
    ASSERT_TRUE(v.stats.has_value());
    EXPECT_EQ(v.stats->stale_epoch, 12u);
    EXPECT_EQ(v.stats->reads, 0u);
}

TEST(ParseVolume, ForwardingCounters) {
    ReplySpec spec;
    spec.stats = false;
    NlMsgPtr msg = MakeReply(spec);
    nlattr* nest = nla_nest_start(msg.get(), CHORUS_A_STATS);
    nla_put_u64(msg.get(), CHORUS_STAT_FORWARDED, 40);
    nla_put_u64(msg.get(), CHORUS_STAT_FORWARD_RESENT, 3);
    nla_put_u64(msg.get(), CHORUS_STAT_FORWARD_EXPIRED, 2);
    nla_put_u64(msg.get(), CHORUS_STAT_FORWARD_SERVED, 17);
    nla_nest_end(msg.get(), nest);
    VolumeInfo v = ParseVolumeMessage(Bytes(msg.get()));
    ASSERT_TRUE(v.stats.has_value());
    EXPECT_EQ(v.stats->forwarded, 40u);
    EXPECT_EQ(v.stats->forward_resent, 3u);
    EXPECT_EQ(v.stats->forward_expired, 2u);
    EXPECT_EQ(v.stats->forward_served, 17u);
    EXPECT_EQ(v.stats->errors, 0u);
}

TEST(ParseVolume, EmptyPeerList) {
    NlMsgPtr msg = MakeReply({});
    nlattr* nest = nla_nest_start(msg.get(), CHORUS_A_PEERS);
    nla_nest_end(msg.get(), nest);
    EXPECT_TRUE(ParseVolumeMessage(Bytes(msg.get())).peers.empty());
}

TEST(ParseVolume, PeerListSkipsPaddingAndTakesIndexedEntries) {
    NlMsgPtr msg = MakeReply({});
    nl_msg* m = msg.get();
    nlattr* nest = nla_nest_start(m, CHORUS_A_PEERS);
    nla_put(m, CHORUS_A_PAD, 0, nullptr);
    PutPeer(m, 1, 5, false);  // numbered by index instead of CHORUS_A_PEER
    PutPeer(m, CHORUS_A_PEER, 6, false);
    nla_nest_end(m, nest);
    VolumeInfo v = ParseVolumeMessage(Bytes(m));
    ASSERT_EQ(v.peers.size(), 2u);
    EXPECT_EQ(v.peers[0].node_id, 5u);
    EXPECT_EQ(v.peers[1].node_id, 6u);
}

TEST(ParseVolume, PeerEventCarriesPeerAndReason) {
    NlMsgPtr msg = MakeReplicatedReply(CHORUS_CMD_EVENT, CHORUS_EVENT_PEER_STATE);
    PutPeer(msg.get(), CHORUS_A_PEER, 2, false);
    nla_put_string(msg.get(), CHORUS_A_REASON, "ping timeout");
    VolumeInfo v = ParseVolumeMessage(Bytes(msg.get()));
    EXPECT_EQ(v.event, static_cast<uint32_t>(CHORUS_EVENT_PEER_STATE));
    EXPECT_EQ(EventName(v.event), "peer-state");
    ASSERT_TRUE(v.peer.has_value());
    EXPECT_EQ(v.peer->node_id, 2u);
    EXPECT_EQ(v.peer->conn_state, static_cast<uint32_t>(CHORUS_CONN_CONNECTED));
    EXPECT_EQ(v.reason, "ping timeout");
    EXPECT_EQ(v.peers.size(), 2u);
}

TEST(ParseVolume, EmptyReasonAndLastErrorCountAsAbsent) {
    ReplySpec spec;
    spec.cmd = CHORUS_CMD_EVENT;
    spec.event = CHORUS_EVENT_PEER_REMOVED;
    NlMsgPtr msg = MakeReply(spec);
    nlattr* nest = nla_nest_start(msg.get(), CHORUS_A_PEER);
    nla_put_u32(msg.get(), CHORUS_PEER_A_NODE_ID, 4);
    nla_put_string(msg.get(), CHORUS_PEER_A_LAST_ERROR, "");
    nla_nest_end(msg.get(), nest);
    nla_put_string(msg.get(), CHORUS_A_REASON, "");
    VolumeInfo v = ParseVolumeMessage(Bytes(msg.get()));
    ASSERT_TRUE(v.peer.has_value());
    EXPECT_FALSE(v.peer->last_error.has_value());
    EXPECT_FALSE(v.reason.has_value());
}

TEST(ParseVolume, MalformedReplicationAttributes) {
    {
        // A port as u32 instead of u16.
        NlMsgPtr msg = MakeReply({});
        nlattr* peers = nla_nest_start(msg.get(), CHORUS_A_PEERS);
        nlattr* peer = nla_nest_start(msg.get(), CHORUS_A_PEER);
        nla_put_u32(msg.get(), CHORUS_PEER_A_PORT, 7788);
        nla_nest_end(msg.get(), peer);
        nla_nest_end(msg.get(), peers);
        EXPECT_EQ(ParseError(Bytes(msg.get())).rfind("CHORUS_PEER_A_PORT has 4 bytes", 0), 0u)
            << ParseError(Bytes(msg.get()));
    }
    {
        // An epoch as u32.
        NlMsgPtr msg = MakeReply({});
        nla_put_u32(msg.get(), CHORUS_A_EPOCH, 7);
        EXPECT_EQ(ParseError(Bytes(msg.get())).rfind("CHORUS_A_EPOCH has 4 bytes", 0), 0u);
    }
    {
        // A reason without its NUL.
        NlMsgPtr msg = MakeReply({});
        nla_put(msg.get(), CHORUS_A_REASON, 3, "abc");
        EXPECT_EQ(ParseError(Bytes(msg.get())), "CHORUS_A_REASON is not a NUL-terminated string");
    }
    {
        // A peer list whose entry is not an attribute stream.
        NlMsgPtr msg = MakeReply({});
        uint8_t junk[6] = {0xff, 0xff, 0, 0, 0, 0};
        nla_put(msg.get(), CHORUS_A_PEERS, sizeof(junk), junk);
        EXPECT_NE(ParseError(Bytes(msg.get())).find("in CHORUS_A_PEERS"), std::string::npos)
            << ParseError(Bytes(msg.get()));
    }
}

TEST(Names, ReplicationEnums) {
    EXPECT_EQ(EventName(CHORUS_EVENT_VOLUME_STATE), "state");
    EXPECT_EQ(EventName(CHORUS_EVENT_ROLE), "role");
    EXPECT_EQ(EventName(CHORUS_EVENT_PEER_STATE), "peer-state");
    EXPECT_EQ(EventName(CHORUS_EVENT_WRITESET), "writeset");
    EXPECT_EQ(EventName(CHORUS_EVENT_RESYNC), "resync");
    EXPECT_EQ(EventName(CHORUS_EVENT_VERIFY), "verify");
    EXPECT_EQ(EventName(CHORUS_EVENT_STALE_EPOCH), "stale-epoch");
    EXPECT_EQ(EventName(CHORUS_EVENT_PEER_ADDED), "peer-added");
    EXPECT_EQ(EventName(CHORUS_EVENT_PEER_REMOVED), "peer-removed");
    EXPECT_EQ(EventName(0), "unknown(0)");
    EXPECT_EQ(EventName(__CHORUS_EVENT_MAX), "unknown(" + std::to_string(__CHORUS_EVENT_MAX) + ")");
    EXPECT_EQ(RoleName(CHORUS_ROLE_OWNER), "owner");
    EXPECT_EQ(RoleName(CHORUS_ROLE_REPLICA), "replica");
    EXPECT_EQ(RoleName(9), "unknown(9)");
    EXPECT_EQ(TransportName(CHORUS_TRANSPORT_TCP), "tcp");
    EXPECT_EQ(TransportName(CHORUS_TRANSPORT_RDMA), "rdma");
    EXPECT_EQ(TransportName(CHORUS_TRANSPORT_RDMA_TCP), "rdma+tcp");
    EXPECT_EQ(TransportName(CHORUS_TRANSPORT_UNSPEC), "unknown(0)");
    EXPECT_EQ(TransportName(__CHORUS_TRANSPORT_MAX),
              "unknown(" + std::to_string(__CHORUS_TRANSPORT_MAX) + ")");
    EXPECT_EQ(ConnStateName(CHORUS_CONN_DISCONNECTED), "disconnected");
    EXPECT_EQ(ConnStateName(CHORUS_CONN_CONNECTING), "connecting");
    EXPECT_EQ(ConnStateName(CHORUS_CONN_CONNECTED), "connected");
    EXPECT_EQ(ConnStateName(CHORUS_CONN_UNREACHABLE), "unreachable");
    EXPECT_EQ(ReplStateName(CHORUS_REPL_UP_TO_DATE), "up-to-date");
    EXPECT_EQ(ReplStateName(CHORUS_REPL_OUT_OF_DATE), "out-of-date");
    EXPECT_EQ(ReplStateName(CHORUS_REPL_SYNCING), "syncing");
    EXPECT_EQ(InitialSyncName(CHORUS_INITIAL_SYNC_FULL), "full");
    EXPECT_EQ(InitialSyncName(CHORUS_INITIAL_SYNC_NONE), "none");
    EXPECT_EQ(PeerAttrName(CHORUS_PEER_A_LAST_ERROR), "CHORUS_PEER_A_LAST_ERROR");
    EXPECT_EQ(PeerAttrName(CHORUS_PEER_A_MAX + 1),
              "peer attribute " + std::to_string(CHORUS_PEER_A_MAX + 1));
    EXPECT_EQ(PeerAttrName(CHORUS_PEER_A_PATH), "CHORUS_PEER_A_PATH");
    EXPECT_EQ(PathAttrName(CHORUS_PATH_A_BYTES_SENT), "CHORUS_PATH_A_BYTES_SENT");
    EXPECT_EQ(PathAttrName(CHORUS_PATH_A_MAX + 1),
              "path attribute " + std::to_string(CHORUS_PATH_A_MAX + 1));
    EXPECT_EQ(CommandName(CHORUS_CMD_WRITESET_REMOVE), "WRITESET_REMOVE");
    EXPECT_EQ(CommandName(CHORUS_CMD_MAX + 1), "command " + std::to_string(CHORUS_CMD_MAX + 1));
}

TEST(Names, ParseTransport) {
    EXPECT_EQ(ParseTransport("tcp"), static_cast<uint32_t>(CHORUS_TRANSPORT_TCP));
    EXPECT_EQ(ParseTransport("rdma"), static_cast<uint32_t>(CHORUS_TRANSPORT_RDMA));
    EXPECT_EQ(ParseTransport("rdma+tcp"), static_cast<uint32_t>(CHORUS_TRANSPORT_RDMA_TCP));
    for (const char* bad :
         {"udp", "", "RDMA", "tcp+rdma", "rdma-tcp", "rdma+tcp ", "unspec", "unknown(0)", "3"}) {
        try {
            ParseTransport(bad);
            ADD_FAILURE() << "accepted '" << bad << "'";
        } catch (const Error& e) {
            EXPECT_EQ(e.what(),
                      "transport '" + std::string(bad) + "' is not tcp, rdma or rdma+tcp");
            EXPECT_EQ(e.errnum(), EINVAL);
        }
    }
}

// Every number the header defines has a name here: a table that fell behind
// <linux/chorus.h> shows up as a fallback name.
TEST(Names, TablesCoverTheHeader) {
    for (int t = 0; t <= CHORUS_A_MAX; t++)
        EXPECT_EQ(AttrName(t).rfind("CHORUS_A_", 0), 0u) << t;
    for (int t = 0; t <= CHORUS_PEER_A_MAX; t++)
        EXPECT_EQ(PeerAttrName(t).rfind("CHORUS_PEER_A_", 0), 0u) << t;
    for (int c = 1; c <= CHORUS_CMD_MAX; c++)
        EXPECT_EQ(CommandName(c).find("command "), std::string::npos) << c;
    for (uint32_t e = 1; e < __CHORUS_EVENT_MAX; e++)
        EXPECT_EQ(EventName(e).find("unknown"), std::string::npos) << e;
    for (uint32_t r = 1; r < __CHORUS_ROLE_MAX; r++)
        EXPECT_EQ(RoleName(r).find("unknown"), std::string::npos) << r;
    for (int t = 0; t <= CHORUS_PATH_A_MAX; t++)
        EXPECT_EQ(PathAttrName(t).rfind("CHORUS_PATH_A_", 0), 0u) << t;
    for (uint32_t t = 1; t < __CHORUS_TRANSPORT_MAX; t++) {
        EXPECT_EQ(TransportName(t).find("unknown"), std::string::npos) << t;
        EXPECT_EQ(ParseTransport(TransportName(t)), t);
    }
    for (uint32_t s = 1; s < __CHORUS_CONN_MAX; s++)
        EXPECT_EQ(ConnStateName(s).find("unknown"), std::string::npos) << s;
    for (uint32_t s = 1; s < __CHORUS_REPL_MAX; s++)
        EXPECT_EQ(ReplStateName(s).find("unknown"), std::string::npos) << s;
    for (uint32_t s = 1; s < __CHORUS_INITIAL_SYNC_MAX; s++)
        EXPECT_EQ(InitialSyncName(s).find("unknown"), std::string::npos) << s;
}

TEST(GenlCodec, LeaseSetCarriesTheDeadline) {
    Parsed p = ParseRequest(BuildLeaseSet(kFamily, 123456789012345ull));
    EXPECT_EQ(p.ghdr.cmd, CHORUS_CMD_LEASE_SET);
    ASSERT_NE(p.tb[CHORUS_A_LEASE_DEADLINE_NS], nullptr);
    EXPECT_EQ(nla_get_u64(p.tb[CHORUS_A_LEASE_DEADLINE_NS]), 123456789012345ull);
    Parsed get = ParseRequest(BuildLeaseGet(kFamily));
    EXPECT_EQ(get.ghdr.cmd, CHORUS_CMD_LEASE_GET);
}

NlMsgPtr MakeLeaseReply(int omit) {
    NlMsgPtr msg(nlmsg_alloc());
    genlmsg_put(msg.get(), 0, 42, kFamily, 0, 0, CHORUS_CMD_LEASE_GET, CHORUS_GENL_VERSION);
    if (omit != CHORUS_A_LEASE_STATE)
        nla_put_u32(msg.get(), CHORUS_A_LEASE_STATE, CHORUS_LEASE_EXPIRED);
    if (omit != CHORUS_A_LEASE_DEADLINE_NS)
        nla_put_u64(msg.get(), CHORUS_A_LEASE_DEADLINE_NS, 5000000000ull);
    if (omit != CHORUS_A_LEASE_NOW_NS)
        nla_put_u64(msg.get(), CHORUS_A_LEASE_NOW_NS, 7500000000ull);
    if (omit != CHORUS_A_LEASE_EXPIRIES)
        nla_put_u64(msg.get(), CHORUS_A_LEASE_EXPIRIES, 3);
    return msg;
}

TEST(GenlCodec, ParsesTheLeaseAndNamesWhatIsMissing) {
    NlMsgPtr reply = MakeLeaseReply(0);
    LeaseInfo lease = ParseLeaseMessage(Bytes(reply.get()));
    EXPECT_EQ(lease.state, static_cast<uint32_t>(CHORUS_LEASE_EXPIRED));
    EXPECT_EQ(lease.deadline_ns, 5000000000ull);
    EXPECT_EQ(lease.now_ns, 7500000000ull);
    EXPECT_EQ(lease.expiries, 3u);
    EXPECT_EQ(LeaseStateName(CHORUS_LEASE_VALID), "valid");
    EXPECT_EQ(LeaseStateName(99), "unknown(99)");

    NlMsgPtr partial = MakeLeaseReply(CHORUS_A_LEASE_NOW_NS);
    try {
        ParseLeaseMessage(Bytes(partial.get()));
        FAIL() << "a lease reply without its clock was accepted";
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("CHORUS_A_LEASE_NOW_NS"), std::string::npos)
            << e.what();
    }
    NlMsgPtr volume = MakeReply({});
    EXPECT_THROW(ParseLeaseMessage(Bytes(volume.get())), Error);
}

TEST(GenlCodec, AuthSetCarriesOneThing) {
    const uint8_t secret[20] = {1, 2, 3, 0, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19};
    AuthSetRequest req;
    req.secret = secret;
    req.keep_previous_s = 600;
    Parsed p = ParseRequest(BuildAuthSet(kFamily, req));
    EXPECT_EQ(p.ghdr.cmd, CHORUS_CMD_AUTH_SET);
    ASSERT_NE(p.tb[CHORUS_A_AUTH_SECRET], nullptr);
    ASSERT_EQ(nla_len(p.tb[CHORUS_A_AUTH_SECRET]), 20);
    EXPECT_EQ(std::memcmp(nla_data(p.tb[CHORUS_A_AUTH_SECRET]), secret, 20), 0);
    ASSERT_NE(p.tb[CHORUS_A_AUTH_KEEP_PREVIOUS_S], nullptr);
    EXPECT_EQ(nla_get_u32(p.tb[CHORUS_A_AUTH_KEEP_PREVIOUS_S]), 600u);
    EXPECT_EQ(p.tb[CHORUS_A_AUTH_CLEAR], nullptr);

    AuthSetRequest drop;
    drop.drop_previous = true;
    p = ParseRequest(BuildAuthSet(kFamily, drop));
    EXPECT_NE(p.tb[CHORUS_A_AUTH_DROP_PREVIOUS], nullptr);
    EXPECT_EQ(p.tb[CHORUS_A_AUTH_SECRET], nullptr);

    AuthSetRequest none;
    EXPECT_THROW(BuildAuthSet(kFamily, none), Error);
    AuthSetRequest two = req;
    two.clear = true;
    EXPECT_THROW(BuildAuthSet(kFamily, two), Error);
    AuthSetRequest keep_alone;
    keep_alone.clear = true;
    keep_alone.keep_previous_s = 5;
    EXPECT_THROW(BuildAuthSet(kFamily, keep_alone), Error);
    EXPECT_EQ(ParseRequest(BuildAuthGet(kFamily)).ghdr.cmd, CHORUS_CMD_AUTH_GET);
}

TEST(GenlCodec, ParsesTheAuthReply) {
    NlMsgPtr msg(nlmsg_alloc());
    genlmsg_put(msg.get(), 0, 42, kFamily, 0, 0, CHORUS_CMD_AUTH_GET, CHORUS_GENL_VERSION);
    nla_put_u64(msg.get(), CHORUS_A_AUTH_KEY_ID, 0x1122334455667788ull);
    nla_put_u64(msg.get(), CHORUS_A_AUTH_PREV_KEY_ID, 7);
    nla_put_u32(msg.get(), CHORUS_A_AUTH_PREV_REMAINING_S, 30);
    nla_put_u64(msg.get(), CHORUS_A_AUTH_FAILURES, 4);
    AuthInfo auth = ParseAuthMessage(Bytes(msg.get()));
    EXPECT_EQ(auth.key_id, 0x1122334455667788ull);
    EXPECT_EQ(auth.prev_key_id, 7u);
    EXPECT_EQ(auth.prev_remaining_s, 30u);
    EXPECT_EQ(auth.failures, 4u);
    EXPECT_EQ(EventName(CHORUS_EVENT_AUTH_FAILED), "auth-failed");

    NlMsgPtr partial(nlmsg_alloc());
    genlmsg_put(partial.get(), 0, 42, kFamily, 0, 0, CHORUS_CMD_AUTH_GET, CHORUS_GENL_VERSION);
    nla_put_u64(partial.get(), CHORUS_A_AUTH_KEY_ID, 1);
    try {
        ParseAuthMessage(Bytes(partial.get()));
        FAIL() << "an auth reply without its failure count was accepted";
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("CHORUS_A_AUTH_PREV_KEY_ID"), std::string::npos)
            << e.what();
    }
}

}  // namespace
}  // namespace chorus
