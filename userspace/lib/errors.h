// Error types shared by the library, chorusctl and chorusd.
//
// The library reports failures by throwing; callers catch at one clear
// boundary (a command in chorusctl, a phase in chorusd) and turn the error
// into a message and an exit code.
#ifndef CHORUS_LIB_ERRORS_H_
#define CHORUS_LIB_ERRORS_H_

#include <stdexcept>
#include <string>

namespace chorus {

// A failure with an optional errno value (positive, 0 if none).
class Error : public std::runtime_error {
public:
    explicit Error(const std::string& what, int errnum = 0)
        : std::runtime_error(what), errnum_(errnum) {}

    int errnum() const { return errnum_; }

private:
    int errnum_;
};

// The kernel (or the netlink layer) refused a request. what() is the
// human-readable reason: the kernel's extack message when it gave one,
// strerror otherwise, followed by the errno name, e.g.
// "backing device /dev/vdb is in use (EBUSY)".
class NetlinkError : public Error {
public:
    NetlinkError(int errnum, const std::string& extack);

    // The extack message text, empty when the kernel gave none.
    const std::string& extack() const { return extack_; }

private:
    std::string extack_;
};

// The generic netlink family "chorus" is not registered: chorus.ko is not
// loaded. Distinct type because chorusctl maps it to its own exit code.
class ModuleNotLoadedError : public Error {
public:
    ModuleNotLoadedError();
};

// "EBUSY" for EBUSY; the number as text if glibc does not know it.
std::string ErrnoName(int errnum);

// "Device or resource busy (EBUSY)".
std::string DescribeErrno(int errnum);

}  // namespace chorus

#endif  // CHORUS_LIB_ERRORS_H_
