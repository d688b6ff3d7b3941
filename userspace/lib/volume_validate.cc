#include "lib/volume_validate.h"

#include <linux/chorus.h>

namespace chorus {

std::string CheckVolumeName(std::string_view name) {
    if (name.empty())
        return "volume name is empty";
    if (name.size() >= CHORUS_VOLUME_NAME_MAX)
        return "volume name '" + std::string(name) + "' is longer than " +
               std::to_string(CHORUS_VOLUME_NAME_MAX - 1) + " characters";
    if (name[0] == '.')
        return "volume name '" + std::string(name) + "' starts with '.'";
    for (char c : name) {
        bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                  c == '.' || c == '_' || c == '-';
        if (!ok)
            return "volume name '" + std::string(name) +
                   "' contains a character outside [A-Za-z0-9._-]";
    }
    return "";
}

std::string CheckBackingPath(std::string_view path) {
    if (path.empty() || path[0] != '/')
        return "backing path '" + std::string(path) + "' is not an absolute path";
    if (path.size() >= CHORUS_BACKING_PATH_MAX)
        return "backing path is longer than " + std::to_string(CHORUS_BACKING_PATH_MAX - 1) +
               " bytes";
    if (path.find('\0') != std::string_view::npos)
        return "backing path contains a NUL byte";
    return "";
}

std::string CheckBlockSize(uint64_t bs) {
    if (bs != 512 && bs != 1024 && bs != 2048 && bs != 4096)
        return "block size " + std::to_string(bs) + " is not one of 512, 1024, 2048, 4096";
    return "";
}

}  // namespace chorus
