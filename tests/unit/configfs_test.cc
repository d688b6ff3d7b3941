// Applying the nvmet plan to a plain temporary tree: idempotence, exact
// teardown, rollback on failure, pre-existing objects left alone.
#include <gtest/gtest.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <thread>

#include "lib/config.h"
#include "lib/configfs.h"
#include "lib/errors.h"
#include "lib/nvmet_plan.h"
#include "test_util.h"

namespace chorus {
namespace {

namespace fs = std::filesystem;
using test::ReadFile;
using test::SnapshotTree;
using test::WriteFile;

const char kConfig[] =
    "[node]\nid = 1\n"
    "[subsystem]\nnqn = \"nqn.2026-11.org.chorus:demo\"\n"
    "hosts = [\"nqn.2026-11.org.chorus:host1\"]\n"
    "[port.tcp1]\ntransport = \"tcp\"\naddress = \"10.99.0.1\"\n"
    "[port.rdma1]\ntransport = \"rdma\"\naddress = \"10.99.0.1\"\n"
    "[ana]\ngroups = [1, 2, 3]\n"
    "[namespace.1]\ndevice = \"/dev/chorus/vol0\"\n"
    "uuid = \"3f1c4b6e-0d2a-4b8e-9c1f-2a3b4c5d6e7f\"\n";

const std::string kSubsys = "nvmet/subsystems/nqn.2026-11.org.chorus:demo";

// The second config: one more namespace and port than kConfig.
Config SecondConfig() {
    return ParseConfig(std::string(kConfig) +
                           "[namespace.2]\ndevice = \"/dev/chorus/vol1\"\n"
                           "uuid = \"11111111-2222-3333-4444-555555555555\"\n"
                           "[port.tcp2]\ntransport = \"tcp\"\naddress = \"10.99.0.3\"\n",
                       "t2.conf");
}

class ConfigfsApply : public testing::Test {
protected:
    void SetUp() override {
        root_ = tmp_ / "configfs";
        state_ = tmp_ / "run/chorus/nvmet.json";
        fs::create_directories(root_);
        // An unrelated object an administrator made: must survive everything.
        WriteFile(root_ + "/nvmet/subsystems/nqn.other:keep/attr_serial", "keep\n");
        fs::create_directories(root_ + "/nvmet/ports/9/subsystems");
        plan_ = PlanNvmetExport(ParseConfig(kConfig, "t.conf"));
    }

    ConfigfsApplier Applier() {
        return ConfigfsApplier(root_, state_, [this](Severity s, const std::string& msg) {
            if (s == Severity::kWarn)
                warnings_.push_back(msg);
        });
    }

    std::string Attr(const std::string& rel) { return ReadFile(root_ + "/" + rel); }

    test::TempDir tmp_;
    std::string root_;
    std::string state_;
    std::vector<ConfigfsOp> plan_;
    std::vector<std::string> warnings_;
};

TEST_F(ConfigfsApply, CreatesTheExport) {
    ApplyResult r = Applier().Apply(plan_);
    EXPECT_EQ(r.changed, static_cast<int>(plan_.size()) - 3);  // nvmet, subsystems, ports exist
    EXPECT_EQ(Attr(kSubsys + "/attr_model"), "chorus");
    EXPECT_EQ(Attr(kSubsys + "/attr_cntlid_min"), "1");
    EXPECT_EQ(Attr(kSubsys + "/attr_cntlid_max"), "2000");
    EXPECT_EQ(Attr(kSubsys + "/namespaces/1/device_uuid"), "3f1c4b6e-0d2a-4b8e-9c1f-2a3b4c5d6e7f");
    EXPECT_EQ(Attr(kSubsys + "/namespaces/1/enable"), "1");
    EXPECT_EQ(Attr("nvmet/ports/2/addr_trtype"), "rdma");
    EXPECT_EQ(Attr("nvmet/ports/1/ana_groups/1/ana_state"), "optimized");
    EXPECT_EQ(Attr("nvmet/ports/1/ana_groups/3/ana_state"), "non-optimized");
    const std::string link = root_ + "/nvmet/ports/1/subsystems/nqn.2026-11.org.chorus:demo";
    EXPECT_TRUE(fs::is_symlink(link));
    EXPECT_TRUE(fs::equivalent(link, root_ + "/" + kSubsys));
    EXPECT_TRUE(fs::exists(state_));
    EXPECT_TRUE(warnings_.empty());
}

TEST_F(ConfigfsApply, ReapplyChangesNothing) {
    Applier().Apply(plan_);
    auto tree = SnapshotTree(root_);
    std::string state = ReadFile(state_);
    ApplyResult r = Applier().Apply(plan_);
    EXPECT_EQ(r.changed, 0);
    EXPECT_EQ(r.skipped, static_cast<int>(plan_.size()));
    EXPECT_EQ(SnapshotTree(root_), tree);
    EXPECT_EQ(ReadFile(state_), state);
    EXPECT_TRUE(warnings_.empty()) << warnings_.front();
}

TEST_F(ConfigfsApply, ConfigfsStyleValuesWithNewlinesCompareEqual) {
    Applier().Apply(plan_);
    // configfs shows values with a newline, serials space-padded.
    WriteFile(root_ + "/" + kSubsys + "/attr_model", "chorus\n");
    std::string serial = Attr(kSubsys + "/attr_serial");
    WriteFile(root_ + "/" + kSubsys + "/attr_serial", serial + "    \n");
    EXPECT_EQ(Applier().Apply(plan_).changed, 0);
    EXPECT_EQ(Attr(kSubsys + "/attr_model"), "chorus\n");
}

TEST_F(ConfigfsApply, ReapplyRepairsDrift) {
    Applier().Apply(plan_);
    WriteFile(root_ + "/nvmet/ports/1/ana_groups/2/ana_state", "inaccessible");
    EXPECT_EQ(Applier().Apply(plan_).changed, 1);
    EXPECT_EQ(Attr("nvmet/ports/1/ana_groups/2/ana_state"), "non-optimized");
}

TEST_F(ConfigfsApply, TeardownRestoresTheTreeExactly) {
    auto before = SnapshotTree(root_);
    Applier().Apply(plan_);
    Applier().Apply(plan_);
    TeardownResult r = Applier().Teardown();
    EXPECT_EQ(r.failed, 0);
    EXPECT_GT(r.undone, 0);
    EXPECT_EQ(SnapshotTree(root_), before);
    EXPECT_FALSE(fs::exists(state_));
    // Nothing left to do.
    TeardownResult again = Applier().Teardown();
    EXPECT_EQ(again.undone, 0);
    EXPECT_EQ(again.failed, 0);
}

TEST_F(ConfigfsApply, TeardownOnAFreshTreeRemovesTopLevelDirsItCreated) {
    fs::remove_all(root_ + "/nvmet");
    Applier().Apply(plan_);
    Applier().Teardown();
    EXPECT_TRUE(fs::is_empty(root_));
}

TEST_F(ConfigfsApply, PreExistingObjectIsReusedAndLeftAlone) {
    // Port 1 already exists with the right transport (e.g. made by hand).
    WriteFile(root_ + "/nvmet/ports/1/addr_trtype", "tcp\n");
    auto before = SnapshotTree(root_);
    Applier().Apply(plan_);
    ASSERT_EQ(warnings_.size(), 1u);
    EXPECT_NE(warnings_[0].find("/nvmet/ports/1 already exists"), std::string::npos);
    EXPECT_TRUE(fs::is_symlink(root_ + "/nvmet/ports/1/subsystems/nqn.2026-11.org.chorus:demo"));
    Applier().Teardown();
    EXPECT_EQ(SnapshotTree(root_), before);
    EXPECT_TRUE(fs::exists(root_ + "/nvmet/ports/1/addr_trtype"));
}

TEST_F(ConfigfsApply, FailedWriteRollsBackThisRun) {
    // A pre-existing port whose addr_traddr is a directory: the write fails
    // with EISDIR after the subsystem and namespace were created.
    fs::create_directories(root_ + "/nvmet/ports/1/addr_traddr");
    auto before = SnapshotTree(root_);
    try {
        Applier().Apply(plan_);
        FAIL() << "apply succeeded";
    } catch (const Error& e) {
        std::string msg = e.what();
        EXPECT_NE(msg.find("write " + root_ + "/nvmet/ports/1/addr_traddr = '10.99.0.1'"),
                  std::string::npos)
            << msg;
        EXPECT_NE(msg.find("(EISDIR)"), std::string::npos) << msg;
        EXPECT_NE(msg.find("rolled back"), std::string::npos) << msg;
        EXPECT_EQ(e.errnum(), EISDIR);
    }
    EXPECT_EQ(SnapshotTree(root_), before);
    EXPECT_FALSE(fs::exists(state_));
}

TEST_F(ConfigfsApply, PathThatIsAFileRollsBack) {
    WriteFile(root_ + "/nvmet/ports/2", "not a directory");
    auto before = SnapshotTree(root_);
    try {
        Applier().Apply(plan_);
        FAIL() << "apply succeeded";
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("/nvmet/ports/2: exists and is not a directory"),
                  std::string::npos)
            << e.what();
    }
    EXPECT_EQ(SnapshotTree(root_), before);
}

TEST_F(ConfigfsApply, FailureAfterEarlierRunKeepsEarlierRecord) {
    // A first run succeeds; a second one with one more namespace and port
    // fails on the new port and must undo only its own changes.
    auto original = SnapshotTree(root_);
    Applier().Apply(plan_);
    auto after_first = SnapshotTree(root_);
    Config c2 = SecondConfig();
    fs::create_directories(root_ + "/nvmet/ports/3/addr_traddr");
    auto before_second = SnapshotTree(root_);
    EXPECT_THROW(Applier().Apply(PlanNvmetExport(c2)), Error);
    EXPECT_EQ(SnapshotTree(root_), before_second);
    EXPECT_FALSE(fs::exists(root_ + "/" + kSubsys + "/namespaces/2"));

    fs::remove_all(root_ + "/nvmet/ports/3");
    EXPECT_EQ(SnapshotTree(root_), after_first);
    TeardownResult r = Applier().Teardown();
    EXPECT_EQ(r.failed, 0);
    EXPECT_EQ(SnapshotTree(root_), original);
}

TEST_F(ConfigfsApply, TeardownFailureIsKeptForRetry) {
    auto before = SnapshotTree(root_);
    Applier().Apply(plan_);
    // An object we did not create inside a port we did (as configfs
    // would have it: a directory; attribute files go with their object):
    // the port's rmdir fails.
    fs::create_directory(root_ + "/nvmet/ports/2/stray");
    TeardownResult r = Applier().Teardown();
    EXPECT_GT(r.failed, 0);
    EXPECT_FALSE(warnings_.empty());
    ASSERT_TRUE(fs::exists(state_));
    fs::remove(root_ + "/nvmet/ports/2/stray");
    TeardownResult r2 = Applier().Teardown();
    EXPECT_EQ(r2.failed, 0);
    EXPECT_EQ(r2.undone, r.failed);
    EXPECT_EQ(SnapshotTree(root_), before);
    EXPECT_FALSE(fs::exists(state_));
}

TEST_F(ConfigfsApply, TeardownToleratesObjectsAlreadyGone) {
    auto before = SnapshotTree(root_);
    Applier().Apply(plan_);
    fs::remove(root_ + "/nvmet/ports/1/subsystems/nqn.2026-11.org.chorus:demo");
    fs::remove_all(root_ + "/nvmet/ports/1/ana_groups/3");
    TeardownResult r = Applier().Teardown();
    EXPECT_EQ(r.failed, 0);
    EXPECT_EQ(SnapshotTree(root_), before);
}

TEST_F(ConfigfsApply, StateFileForAnotherRootIsRefused) {
    Applier().Apply(plan_);
    ConfigfsApplier other(tmp_ / "elsewhere", state_);
    fs::create_directories(tmp_ / "elsewhere");
    try {
        other.Teardown();
        FAIL();
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("records changes under " + root_), std::string::npos)
            << e.what();
    }
}

TEST_F(ConfigfsApply, MissingRootIsAClearError) {
    ConfigfsApplier a(tmp_ / "no-such-configfs", state_);
    try {
        a.Apply(plan_);
        FAIL();
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("is configfs mounted?"), std::string::npos);
    }
}

TEST_F(ConfigfsApply, TwoAppliersOnOneStateFileKeepBothRecords) {
    auto original = SnapshotTree(root_);
    // Both made before either runs: each must read the record at Apply
    // time, under the lock, not keep a stale copy.
    ConfigfsApplier a = Applier();
    ConfigfsApplier b = Applier();
    a.Apply(plan_);
    b.Apply(PlanNvmetExport(SecondConfig()));
    std::vector<StateEntry> entries = StateFile(state_).Load(root_);
    auto has = [&](const std::string& rel) {
        for (const auto& e : entries)
            if (e.kind == StateEntry::Kind::kDir && e.path == rel)
                return true;
        return false;
    };
    EXPECT_TRUE(has(kSubsys));          // from a
    EXPECT_TRUE(has("nvmet/ports/3"));  // from b
    EXPECT_EQ(Applier().Teardown().failed, 0);
    EXPECT_EQ(SnapshotTree(root_), original);
    // Only the state file's lock is left beside it: no temporary files.
    for (const auto& e : fs::directory_iterator(fs::path(state_).parent_path()))
        EXPECT_EQ(e.path().filename(), "nvmet.json.lock");
}

TEST_F(ConfigfsApply, HeldLockMakesTheSecondRunFailNamingTheLock) {
    fs::create_directories(fs::path(state_).parent_path());
    const std::string lock_path = state_ + ".lock";
    FileLock held;
    ASSERT_EQ(held.Acquire(lock_path.c_str(), std::chrono::milliseconds(0)), 0);
    auto before = SnapshotTree(root_);
    for (bool teardown : {false, true}) {
        ConfigfsApplier a = Applier();
        a.set_lock_timeout(std::chrono::milliseconds(200));
        try {
            if (teardown)
                a.Teardown();
            else
                a.Apply(plan_);
            FAIL() << "ran without the lock";
        } catch (const Error& e) {
            EXPECT_NE(std::string(e.what()).find("another chorusd run holds the lock " + lock_path +
                                                 " (waited 200 ms)"),
                      std::string::npos)
                << e.what();
        }
    }
    EXPECT_EQ(SnapshotTree(root_), before);
    EXPECT_FALSE(fs::exists(state_));
}

TEST_F(ConfigfsApply, SecondRunWaitsForTheLock) {
    fs::create_directories(fs::path(state_).parent_path());
    auto held = std::make_unique<FileLock>();
    ASSERT_EQ(held->Acquire((state_ + ".lock").c_str(), std::chrono::milliseconds(0)), 0);
    std::thread release([&held] {
        std::this_thread::sleep_for(std::chrono::milliseconds(200));
        held.reset();
    });
    ConfigfsApplier a = Applier();
    a.set_lock_timeout(std::chrono::seconds(10));
    ApplyResult r = a.Apply(plan_);
    release.join();
    EXPECT_GT(r.changed, 0);
}

TEST_F(ConfigfsApply, ConcurrentRunsKeepEveryRecord) {
    auto original = SnapshotTree(root_);
    std::vector<ConfigfsOp> plan2 = PlanNvmetExport(SecondConfig());
    // No log callback: warnings_ is not for two threads.
    std::thread t([&] { ConfigfsApplier(root_, state_).Apply(plan_); });
    ConfigfsApplier(root_, state_).Apply(plan2);
    t.join();
    // Whichever ran second reused what the first made; together they
    // recorded everything, so teardown restores the tree exactly.
    EXPECT_EQ(Applier().Teardown().failed, 0);
    EXPECT_EQ(SnapshotTree(root_), original);
}

TEST_F(ConfigfsApply, CrashAfterRecordingLeavesAnUndoableRecord) {
    // A crash between saving an entry and acting on it leaves an entry for
    // something that does not exist: teardown takes it as already gone.
    auto before = SnapshotTree(root_);
    Applier().Apply(plan_);
    std::vector<StateEntry> entries = StateFile(state_).Load(root_);
    entries.push_back({StateEntry::Kind::kDir, "nvmet/ports/7", ""});
    entries.push_back({StateEntry::Kind::kLink, "nvmet/ports/1/subsystems/never", ""});
    StateFile(state_).Save(root_, entries);
    TeardownResult r = Applier().Teardown();
    EXPECT_EQ(r.failed, 0);
    EXPECT_EQ(SnapshotTree(root_), before);
}

TEST(ConfigfsApplierRoot, IsMadeAbsoluteAndNormal) {
    // Symlink targets are root + path: a relative root would break them.
    ConfigfsApplier a("relative/./dir/", "/nonexistent/state.json");
    EXPECT_EQ(a.root(), (fs::current_path() / "relative/dir").string());
    ConfigfsApplier b("/sys/kernel/config/", "/nonexistent/state.json");
    EXPECT_EQ(b.root(), "/sys/kernel/config");
}

TEST(StateFile, RoundTripAndCorruption) {
    test::TempDir tmp;
    StateFile sf(tmp / "s/state.json");
    EXPECT_TRUE(sf.Load("/r").empty());
    std::vector<StateEntry> entries = {
        {StateEntry::Kind::kDir, "nvmet/ports/1", ""},
        {StateEntry::Kind::kFile, "nvmet/ports/1/addr_trtype", ""},
        {StateEntry::Kind::kWrite, "nvmet/x/enable", "0"},
        {StateEntry::Kind::kLink, "nvmet/ports/1/subsystems/n", ""},
    };
    sf.Save("/r", entries);
    EXPECT_EQ(sf.Load("/r"), entries);
    sf.Save("/r", {});
    EXPECT_FALSE(fs::exists(tmp / "s/state.json"));
    WriteFile(tmp / "s/state.json", "{ not json");
    EXPECT_THROW(sf.Load("/r"), Error);
    WriteFile(tmp / "s/state.json",
              R"({"version":1,"root":"/r","entries":[{"type":"bogus","path":"p"}]})");
    EXPECT_THROW(sf.Load("/r"), Error);
}

}  // namespace
}  // namespace chorus
