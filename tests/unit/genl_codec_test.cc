// Building chorus requests and parsing kernel replies, events and error
// acks, with message buffers made by libnl's own nlmsg API.
#include <gtest/gtest.h>

#include <cerrno>
#include <cstring>
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
// kernel's policy would see them.
struct Parsed {
    genlmsghdr ghdr;
    nlattr* tb[CHORUS_A_MAX + 1];
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
    EXPECT_EQ(genlmsg_parse(nlh, 0, p.tb, CHORUS_A_MAX, policy), 0);
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
    Parsed p = ParseRequest(BuildVolumeCreate(kFamily, req).get());
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

}  // namespace
}  // namespace chorus
