// The file helpers of lib/fd.h: the write loop and the lock file.
#include <fcntl.h>
#include <gtest/gtest.h>

#include <cerrno>
#include <chrono>
#include <string>

#include "lib/fd.h"
#include "test_util.h"

namespace chorus {
namespace {

using std::chrono::milliseconds;

TEST(PwriteAll, WritesEverythingAtTheOffset) {
    test::TempDir tmp;
    const std::string path = tmp / "f";
    test::WriteFile(path, "0123456789");
    Fd fd(::open(path.c_str(), O_WRONLY | O_CLOEXEC));
    ASSERT_TRUE(fd.valid());
    uint64_t off = 3;
    EXPECT_EQ(PwriteAll(fd.get(), "abc", 3, off), 0);
    EXPECT_EQ(off, 6u);
    EXPECT_EQ(test::ReadFile(path), "012abc6789");
}

TEST(PwriteAll, ReturnsTheErrno) {
    test::TempDir tmp;
    const std::string path = tmp / "f";
    test::WriteFile(path, "x");
    Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
    uint64_t off = 0;
    EXPECT_EQ(PwriteAll(fd.get(), "abc", 3, off), EBADF);
    EXPECT_EQ(off, 0u);
}

TEST(FileLock, ExcludesASecondHolderUntilReleased) {
    test::TempDir tmp;
    const std::string path = tmp / "x.lock";
    {
        FileLock a;
        ASSERT_EQ(a.Acquire(path.c_str(), milliseconds(0)), 0);
        EXPECT_TRUE(a.locked());
        FileLock b;
        auto start = std::chrono::steady_clock::now();
        EXPECT_EQ(b.Acquire(path.c_str(), milliseconds(120)), EWOULDBLOCK);
        EXPECT_GE(std::chrono::steady_clock::now() - start, milliseconds(120));
        EXPECT_FALSE(b.locked());
    }
    FileLock c;
    EXPECT_EQ(c.Acquire(path.c_str(), milliseconds(0)), 0);
}

TEST(FileLock, MissingDirectoryIsAnError) {
    test::TempDir tmp;
    FileLock l;
    EXPECT_EQ(l.Acquire((tmp / "no/such/dir.lock").c_str(), milliseconds(0)), ENOENT);
}

}  // namespace
}  // namespace chorus
