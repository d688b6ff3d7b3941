// Helpers of the generic netlink codec's tests (genl_codec_test.cc,
// genl_codec_reply_test.cc): requests parsed back the way the kernel's
// policy sees them, kernel replies made in memory, whole or damaged.
#ifndef CHORUS_TESTS_UNIT_GENL_CODEC_TEST_UTIL_H_
#define CHORUS_TESTS_UNIT_GENL_CODEC_TEST_UTIL_H_

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include <linux/chorus.h>
#include <netlink/attr.h>
#include <netlink/genl/genl.h>

#include "lib/genl_client.h"

namespace chorus::test {

constexpr int kFamily = 0x1d;

std::span<const uint8_t> Bytes(nl_msg* msg);
std::vector<uint8_t> Copy(nl_msg* msg);

// Parses a request built by the library back into attributes, the way the
// kernel's policy would see them. tb points into the message, so a Parsed
// made from a temporary keeps that message alive in owned.
struct Parsed {
    genlmsghdr ghdr;
    nlattr* tb[CHORUS_A_MAX + 1];
    NlMsgPtr owned;
};

Parsed ParseRequest(nl_msg* msg);
Parsed ParseRequest(NlMsgPtr msg);

// The attribute types a parsed request carries, in order.
std::vector<int> Present(const Parsed& p);

// What a kernel reply looks like; fields can be left out or damaged.
struct ReplySpec {
    uint8_t cmd = CHORUS_CMD_VOLUME_GET;
    std::vector<int> omit;
    int short_attr = 0;         // put this attribute with too few bytes
    bool unterminated = false;  // put the name without its NUL
    bool stats = true;
    uint32_t event = 0;
};

NlMsgPtr MakeReply(const ReplySpec& spec);

// What ParseVolumeMessage() throws for bytes, or "" when it parses them.
std::string ParseError(std::span<const uint8_t> bytes);

}  // namespace chorus::test

#endif  // CHORUS_TESTS_UNIT_GENL_CODEC_TEST_UTIL_H_
