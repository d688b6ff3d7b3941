// An owned file descriptor, an flock(2) held on one, and a write loop.
#ifndef CHORUS_LIB_FD_H_
#define CHORUS_LIB_FD_H_

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <thread>
#include <utility>

namespace chorus {

class Fd {
public:
    Fd() = default;
    explicit Fd(int fd) : fd_(fd) {}
    Fd(Fd&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
    Fd& operator=(Fd&& other) noexcept {
        if (this != &other)
            Reset(std::exchange(other.fd_, -1));
        return *this;
    }
    Fd(const Fd&) = delete;
    Fd& operator=(const Fd&) = delete;
    ~Fd() { Reset(); }

    int get() const { return fd_; }
    bool valid() const { return fd_ >= 0; }

    void Reset(int fd = -1) {
        if (fd_ >= 0)
            ::close(fd_);
        fd_ = fd;
    }

private:
    int fd_ = -1;
};

// An exclusive flock(2) on a lock file, held until destruction (or until
// the process dies: the kernel drops it with the last open descriptor).
class FileLock {
public:
    FileLock() = default;

    // Opens path (creating it, mode 0644) and locks it, retrying every
    // 50 ms for up to timeout while another holder has it. Returns 0 once
    // locked, else the errno: EWOULDBLOCK when the wait timed out.
    int Acquire(const char* path, std::chrono::milliseconds timeout) {
        Fd fd(::open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644));
        if (!fd.valid())
            return errno;
        const auto deadline = std::chrono::steady_clock::now() + timeout;
        while (::flock(fd.get(), LOCK_EX | LOCK_NB) < 0) {
            if (errno != EWOULDBLOCK && errno != EINTR)
                return errno;
            if (std::chrono::steady_clock::now() >= deadline)
                return EWOULDBLOCK;
            std::this_thread::sleep_for(std::chrono::milliseconds(50));
        }
        fd_ = std::move(fd);
        return 0;
    }
    bool locked() const { return fd_.valid(); }

private:
    Fd fd_;
};

// Writes all of buf at offset, resuming after short writes and EINTR.
// Returns 0, or the errno (EIO if write makes no progress) with offset
// advanced to where it failed.
inline int PwriteAll(int fd, const void* buf, size_t len, uint64_t& offset) {
    auto* p = static_cast<const uint8_t*>(buf);
    while (len > 0) {
        ssize_t n = ::pwrite(fd, p, len, static_cast<off_t>(offset));
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return n < 0 ? errno : EIO;
        p += n;
        len -= static_cast<size_t>(n);
        offset += static_cast<uint64_t>(n);
    }
    return 0;
}

}  // namespace chorus

#endif  // CHORUS_LIB_FD_H_
