// volume format and inspect: a backing device's on-disk metadata, read and
// written directly, without the module.
#include <fcntl.h>
#include <sys/ioctl.h>
#include <sys/stat.h>

#include <cerrno>
#include <iostream>
#include <string>

#include <linux/fs.h>

#include "chorusctl/args.h"
#include "chorusctl/command.h"
#include "chorusctl/commands.h"
#include "chorusctl/output.h"
#include "lib/fd.h"
#include "lib/meta.h"
#include "lib/size.h"
#include "lib/uuid.h"

namespace chorus {

namespace {

// A backing device opened for format or inspect, with what the metadata
// layout needs to know of it.
struct Backing {
    Fd fd;
    uint64_t bytes = 0;
    uint32_t lbs = 512;
};

// format needs a block device and O_EXCL, which fails with EBUSY while it is
// mounted or held by a chorus volume. inspect reads only, so it neither
// claims the device nor refuses a regular file (an image of one).
Backing OpenBacking(const std::string& path, bool for_format) {
    int flags = (for_format ? O_RDWR | O_EXCL : O_RDONLY) | O_CLOEXEC;
    Backing b;
    b.fd.Reset(::open(path.c_str(), flags));
    if (!b.fd.valid()) {
        int err = errno;
        if (err == EBUSY)
            throw InUseError(path);
        throw Error("cannot open " + path + ": " + DescribeErrno(err), err);
    }
    struct stat st;
    if (::fstat(b.fd.get(), &st) < 0)
        throw Error("cannot stat " + path + ": " + DescribeErrno(errno), errno);
    if (!S_ISBLK(st.st_mode)) {
        if (for_format || !S_ISREG(st.st_mode))
            throw Error(path + " is not a block device (ENOTBLK)", ENOTBLK);
        b.bytes = static_cast<uint64_t>(st.st_size);
        return b;
    }
    int lbs = 0;
    if (::ioctl(b.fd.get(), BLKGETSIZE64, &b.bytes) < 0 || ::ioctl(b.fd.get(), BLKSSZGET, &lbs) < 0)
        throw Error("cannot get the size of " + path + ": " + DescribeErrno(errno), errno);
    b.lbs = static_cast<uint32_t>(lbs);
    // chorus.ko writes superblocks with bios, behind the page cache of the
    // block device: read and write around that cache so that nothing stale
    // is seen or kept.
    if (::fcntl(b.fd.get(), F_SETFL, O_DIRECT) < 0)
        throw Error("cannot use O_DIRECT on " + path + ": " + DescribeErrno(errno), errno);
    return b;
}

class VolumeFormat : public Command {
public:
    void AddOptions(CLI::App& cmd) override {
        AddBacking(cmd, backing_, "Absolute path of the backing block device");
        shape_.AddTo(cmd);
        cmd.add_flag("--force", force_, "Format even if the device holds chorus metadata");
    }

    std::string Subject() const override { return backing_; }

    int Run(const GlobalOptions& global) override {
        FormatOptions opt = Options();
        Backing b = OpenBacking(backing_, true);
        Formatted f;
        try {
            f = FormatDevice(b.fd.get(), b.bytes, b.lbs, opt);
        } catch (const Error& e) {
            if (e.errnum() != EEXIST)
                throw;
            throw Error(std::string(e.what()) + "; --force formats it anyway, losing its state",
                        e.errnum());
        }
        if (global.json) {
            nlohmann::json j = MetaSuperToJson(f.super);
            j["backing"] = backing_;
            j["device_logical_block_size"] = b.lbs;
            j["max_size_bytes"] = f.layout.max_data_bytes;
            PrintJson(j);
        } else {
            std::cout << "formatted " << backing_ << ": volume uuid "
                      << FormatUuid(f.super.volume_uuid) << ", " << FormatSize(f.layout.data_bytes)
                      << " of data, block size " << f.layout.block_size << ", metadata "
                      << FormatSize(f.layout.md_bytes) << " at the end" << std::endl;
        }
        return kExitOk;
    }

private:
    // The options checked before the device is opened. Throws UsageError.
    FormatOptions Options() const {
        VolumeShape shape = shape_.Parse();
        if (shape.uuid && IsNullUuid(*shape.uuid))
            throw UsageError("--uuid: the volume uuid must not be all zeroes");
        FormatOptions opt;
        opt.size = shape.size.value_or(0);
        opt.block_size = shape.block_size.value_or(0);
        opt.uuid = shape.uuid;
        opt.force = force_;
        return opt;
    }

    std::string backing_;
    ShapeOptions shape_;
    bool force_ = false;
};

class VolumeInspect : public Command {
public:
    void AddOptions(CLI::App& cmd) override {
        AddBacking(cmd, backing_, "Path of the backing block device");
    }

    std::string Subject() const override { return backing_; }

    int Run(const GlobalOptions& global) override {
        Backing b = OpenBacking(backing_, false);
        MetaRead m = ReadMeta(b.fd.get(), b.bytes);
        if (m.state == MetaRead::State::kNotFormatted)
            throw Error("not formatted: no chorus metadata (run chorusctl volume format)", ENODATA);
        if (m.state == MetaRead::State::kCorrupt)
            throw Error("corrupt: " + m.Problems(), EUCLEAN);
        if (global.json) {
            PrintJson(ToJson(m));
        } else {
            PrintMetaInspect(std::cout, backing_, m);
            std::cout.flush();
        }
        return kExitOk;
    }

private:
    // The current superblock, and which copy it is and how both copies are.
    nlohmann::json ToJson(const MetaRead& m) const {
        nlohmann::json j = MetaSuperToJson(m.super);
        j["backing"] = backing_;
        j["current_copy"] = m.current == 0 ? "A" : "B";
        nlohmann::json copies = nlohmann::json::object();
        for (int i = 0; i < 2; i++) {
            const DecodeResult& c = m.copies[i];
            nlohmann::json cj = {{"valid", c.ok()}};
            if (c.ok())
                cj["seq"] = c.super.seq;
            else
                cj["error"] = c.reason;
            copies[i == 0 ? "A" : "B"] = cj;
        }
        j["copies"] = copies;
        return j;
    }

    std::string backing_;
};

}  // namespace

std::unique_ptr<Command> NewVolumeFormat() {
    return std::make_unique<VolumeFormat>();
}

std::unique_ptr<Command> NewVolumeInspect() {
    return std::make_unique<VolumeInspect>();
}

}  // namespace chorus
