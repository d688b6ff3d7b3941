// chorusd's logger: level names and the journal check.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <string>

#include "chorusd/log.h"
#include "lib/fd.h"
#include "test_util.h"

namespace chorus {
namespace {

TEST(LogLevel, Names) {
    EXPECT_EQ(ParseLogLevel("debug"), Severity::kDebug);
    EXPECT_EQ(ParseLogLevel("info"), Severity::kInfo);
    EXPECT_EQ(ParseLogLevel("warn"), Severity::kWarn);
    EXPECT_EQ(ParseLogLevel("error"), Severity::kError);
    EXPECT_FALSE(ParseLogLevel("verbose").has_value());
}

TEST(JournalStream, OnlyWhenItNamesTheFile) {
    test::TempDir tmp;
    test::WriteFile(tmp / "stream", "");
    test::WriteFile(tmp / "other", "");
    Fd fd(::open((tmp / "stream").c_str(), O_WRONLY | O_CLOEXEC));
    ASSERT_TRUE(fd.valid());
    struct stat st, other;
    ASSERT_EQ(::fstat(fd.get(), &st), 0);
    ASSERT_EQ(::stat((tmp / "other").c_str(), &other), 0);
    auto env = [](const struct stat& s) {
        return std::to_string(static_cast<unsigned long long>(s.st_dev)) + ":" +
               std::to_string(static_cast<unsigned long long>(s.st_ino));
    };
    EXPECT_TRUE(IsJournalStream(env(st).c_str(), fd.get()));
    // Inherited from a parent whose stderr was the journal, ours is not.
    EXPECT_FALSE(IsJournalStream(env(other).c_str(), fd.get()));
    EXPECT_FALSE(IsJournalStream(nullptr, fd.get()));
    EXPECT_FALSE(IsJournalStream("", fd.get()));
    EXPECT_FALSE(IsJournalStream("garbage", fd.get()));
    EXPECT_FALSE(IsJournalStream((env(st) + "x").c_str(), fd.get()));
    EXPECT_FALSE(IsJournalStream(env(st).c_str(), -1));
}

}  // namespace
}  // namespace chorus
