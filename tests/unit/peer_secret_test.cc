// The peer secret file (lib/peer_secret.h): who may own it, its mode, its
// size, and that no message shows the secret.
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <string>

#include <linux/chorus.h>

#include "lib/errors.h"
#include "lib/peer_secret.h"
#include "test_util.h"

namespace chorus {
namespace {

const std::string kSecret = "correct horse battery staple 42";

std::string WriteSecret(const test::TempDir& dir, const std::string& name,
                        const std::string& content, mode_t mode) {
    std::string path = dir / name;
    test::WriteFile(path, content);
    EXPECT_EQ(chmod(path.c_str(), mode), 0);
    return path;
}

// The message of ReadPeerSecret's error, or "" when it read the file.
std::string ReadError(const std::string& path, uid_t owner = getuid()) {
    try {
        ReadPeerSecret(path, owner);
        return "";
    } catch (const Error& e) {
        std::string what = e.what();
        EXPECT_EQ(what.find("horse"), std::string::npos) << "the secret in: " << what;
        return what;
    }
}

TEST(PeerSecret, ReadsAnOwnerOnlyFile) {
    test::TempDir dir;
    SecretBytes s = ReadPeerSecret(WriteSecret(dir, "k", kSecret, 0600), getuid());
    EXPECT_EQ(std::string(s.bytes().begin(), s.bytes().end()), kSecret);
    // One trailing newline is not part of it (echo SECRET > FILE); 0400 is fine.
    s = ReadPeerSecret(WriteSecret(dir, "n", kSecret + "\n", 0400), getuid());
    EXPECT_EQ(std::string(s.bytes().begin(), s.bytes().end()), kSecret);
    // Binary bytes, NULs included, are the secret as they are.
    std::string binary(32, '\0');
    binary[5] = '\xff';
    s = ReadPeerSecret(WriteSecret(dir, "b", binary, 0600), getuid());
    EXPECT_EQ(s.size(), 32u);
    // Moving takes the bytes; the moved-from holder is empty.
    SecretBytes moved = std::move(s);
    EXPECT_EQ(moved.size(), 32u);
    EXPECT_EQ(s.size(), 0u);  // NOLINT(bugprone-use-after-move)
}

TEST(PeerSecret, RefusesAModeThatLetsOthersRead) {
    test::TempDir dir;
    for (mode_t mode : {0644, 0640, 0604, 0660, 0610}) {
        std::string path = WriteSecret(dir, "k", kSecret, mode);
        std::string why = ReadError(path);
        char octal[8];
        std::snprintf(octal, sizeof(octal), "%04o", mode);
        EXPECT_NE(why.find("peer secret file '" + path + "' has mode " + octal), std::string::npos)
            << why;
        EXPECT_NE(why.find("mode 0600"), std::string::npos) << why;
    }
}

TEST(PeerSecret, RefusesAnotherOwner) {
    test::TempDir dir;
    std::string path = WriteSecret(dir, "k", kSecret, 0600);
    std::string why = ReadError(path, getuid() + 1);
    EXPECT_NE(why.find("is owned by uid " + std::to_string(getuid())), std::string::npos) << why;
    if (getuid() != 0) {
        // The default: root only.
        why = ReadError(path, 0);
        EXPECT_NE(why.find("must be owned by root"), std::string::npos) << why;
    }
}

TEST(PeerSecret, RefusesWrongSizesLinksAndMissingFiles) {
    test::TempDir dir;
    std::string why = ReadError(WriteSecret(dir, "short", "too short", 0600));
    EXPECT_NE(why.find("must hold 16 to 128 bytes"), std::string::npos) << why;
    EXPECT_NE(why.find("it holds 9"), std::string::npos) << why;
    why = ReadError(WriteSecret(dir, "long", std::string(CHORUS_AUTH_SECRET_MAX + 1, 'x'), 0600));
    EXPECT_NE(why.find("it holds 129"), std::string::npos) << why;
    why = ReadError(WriteSecret(dir, "longer", std::string(4096, 'x'), 0600));
    EXPECT_NE(why.find("it holds more"), std::string::npos) << why;
    // The most, with its newline, is fine.
    EXPECT_EQ(
        ReadError(WriteSecret(dir, "max", std::string(CHORUS_AUTH_SECRET_MAX, 'x') + "\n", 0600)),
        "");
    EXPECT_EQ(ReadError(WriteSecret(dir, "min", std::string(CHORUS_AUTH_SECRET_MIN, 'x'), 0600)),
              "");

    std::string target = WriteSecret(dir, "target", kSecret, 0600);
    ASSERT_EQ(symlink(target.c_str(), (dir / "link").c_str()), 0);
    why = ReadError(dir / "link");
    EXPECT_NE(why.find("is a symbolic link"), std::string::npos) << why;
    why = ReadError(dir / "missing");
    EXPECT_NE(why.find("cannot read peer secret file"), std::string::npos) << why;
    why = ReadError(dir.path());
    EXPECT_NE(why.find("not a regular file"), std::string::npos) << why;
}

TEST(PeerSecret, KeyIdText) {
    EXPECT_EQ(KeyIdText(0), "none");
    EXPECT_EQ(KeyIdText(0x1a2b), "0000000000001a2b");
    EXPECT_EQ(KeyIdText(~0ull), "ffffffffffffffff");
}

}  // namespace
}  // namespace chorus
