#include "lib/errors.h"

#include <string.h>

#include <linux/chorus.h>

namespace chorus {

namespace {

std::string NetlinkReason(int errnum, const std::string& extack) {
    if (extack.empty())
        return DescribeErrno(errnum);
    return extack + " (" + ErrnoName(errnum) + ")";
}

}  // namespace

NetlinkError::NetlinkError(int errnum, const std::string& extack)
    : Error(NetlinkReason(errnum, extack), errnum), extack_(extack) {}

ModuleNotLoadedError::ModuleNotLoadedError()
    : Error(std::string("chorus kernel module is not loaded (generic netlink family '") +
                CHORUS_GENL_NAME + "' not found)",
            ENOENT) {}

std::string ErrnoName(int errnum) {
    const char* name = strerrorname_np(errnum);
    if (name == nullptr)
        return "errno " + std::to_string(errnum);
    return name;
}

std::string DescribeErrno(int errnum) {
    return std::string(strerror(errnum)) + " (" + ErrnoName(errnum) + ")";
}

}  // namespace chorus
