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

}  // namespace chorus
