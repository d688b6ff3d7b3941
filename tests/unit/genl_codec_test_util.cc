#include "genl_codec_test_util.h"

#include <gtest/gtest.h>

#include <cstring>

#include <linux/genetlink.h>
#include <linux/netlink.h>
#include <netlink/msg.h>

#include "lib/errors.h"
#include "lib/genl_codec.h"

namespace chorus::test {

std::span<const uint8_t> Bytes(nl_msg* msg) {
    const nlmsghdr* nlh = nlmsg_hdr(msg);
    return {reinterpret_cast<const uint8_t*>(nlh), nlh->nlmsg_len};
}

std::vector<uint8_t> Copy(nl_msg* msg) {
    auto b = Bytes(msg);
    return {b.begin(), b.end()};
}

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
    policy[CHORUS_A_PAYLOAD_CRC] = {NLA_U8, 0, 0};
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

std::vector<int> Present(const Parsed& p) {
    std::vector<int> types;
    for (int t = 1; t <= CHORUS_A_MAX; t++)
        if (p.tb[t] != nullptr)
            types.push_back(t);
    return types;
}

}  // namespace chorus::test
