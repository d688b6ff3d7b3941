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

#include "genl_codec_test_util.h"
#include "lib/errors.h"
#include "lib/genl_client.h"
#include "lib/genl_codec.h"

namespace chorus {
namespace {

using namespace chorus::test;

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

TEST(BuildRequest, VolumeSetSendsPayloadCrcOnAndOff) {
    VolumeSetRequest req;
    req.volume = "vol0";
    req.payload_crc = false;  // "off" is a value, not an absence
    EXPECT_FALSE(req.empty());
    Parsed p = ParseRequest(BuildVolumeSet(kFamily, req));
    EXPECT_EQ(Present(p), (std::vector<int>{CHORUS_A_VOLUME_NAME, CHORUS_A_PAYLOAD_CRC}));
    ASSERT_EQ(nla_len(p.tb[CHORUS_A_PAYLOAD_CRC]), 1);
    EXPECT_EQ(nla_get_u8(p.tb[CHORUS_A_PAYLOAD_CRC]), 0);
    req.payload_crc = true;
    Parsed q = ParseRequest(BuildVolumeSet(kFamily, req));
    EXPECT_EQ(nla_get_u8(q.tb[CHORUS_A_PAYLOAD_CRC]), 1);
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
    nla_put_u8(m, CHORUS_A_DISK_IN_WRITESET, 1);
    nla_put_u32(m, CHORUS_A_DISK_HELD, 7);
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
    EXPECT_EQ(v.disk_in_writeset, true);  // failed, not recorded yet
    EXPECT_EQ(v.disk_held, 7u);
    ASSERT_EQ(v.peers.size(), 1u);
    EXPECT_EQ(v.peers[0].disk_failed, true);

    // A healthy volume of an older module says nothing of its disk.
    VolumeInfo plain = ParseVolumeMessage(Bytes(MakeReply({}).get()));
    EXPECT_FALSE(plain.disk_timeout_ms || plain.disk_error || plain.disk_failed_at ||
                 plain.disk_in_writeset || plain.disk_held);
}

}  // namespace
}  // namespace chorus
