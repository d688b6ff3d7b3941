#include "lib/nqn.h"

#include <algorithm>

namespace chorus {

std::string NqnProblem(std::string_view nqn) {
    if (nqn.rfind("nqn.", 0) != 0)
        return "'" + std::string(nqn) + "' does not start with 'nqn.'";
    if (nqn.size() > kMaxNqnLen)
        return "'" + std::string(nqn.substr(0, 40)) + "...' is " + std::to_string(nqn.size()) +
               " bytes, at most " + std::to_string(kMaxNqnLen) + " allowed";
    bool printable =
        std::all_of(nqn.begin(), nqn.end(), [](char c) { return c >= '!' && c <= '~'; });
    if (!printable || nqn.find('/') != std::string_view::npos)
        return "'" + std::string(nqn) + "' contains a blank, '/' or a non-ASCII character";
    return "";
}

std::string IqnProblem(std::string_view iqn) {
    if (iqn.rfind("iqn.", 0) != 0)
        return "'" + std::string(iqn) + "' does not start with 'iqn.'";
    if (iqn.size() > kMaxIqnLen)
        return "'" + std::string(iqn.substr(0, 40)) + "...' is " + std::to_string(iqn.size()) +
               " bytes, at most " + std::to_string(kMaxIqnLen) + " allowed";
    auto allowed = [](char c) {
        return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '.' || c == ':';
    };
    if (!std::all_of(iqn.begin(), iqn.end(), allowed))
        return "'" + std::string(iqn) +
               "' holds a character an iSCSI name may not (only a-z, 0-9, '-', '.' and ':')";
    return "";
}

std::string IqnOf(std::string_view nqn) {
    std::string iqn = "iqn." + std::string(nqn.substr(nqn.rfind("nqn.", 0) == 0 ? 4 : 0));
    std::transform(iqn.begin(), iqn.end(), iqn.begin(), [](char c) {
        return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
    });
    return iqn;
}

}  // namespace chorus
