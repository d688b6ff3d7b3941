// NVMe Qualified Names as chorus accepts them: for subsystems in the config
// file and the cluster store, and for the hosts allowed to reach them.
#ifndef CHORUS_LIB_NQN_H_
#define CHORUS_LIB_NQN_H_

#include <cstddef>
#include <string>
#include <string_view>

namespace chorus {

inline constexpr size_t kMaxNqnLen = 223;  // NVMF_NQN_SIZE - 1

// Why nqn is not usable, or "" if it is: it must start with "nqn.", be at
// most 223 bytes, and name a configfs directory (no '/', blank or
// non-ASCII character).
std::string NqnProblem(std::string_view nqn);

}  // namespace chorus

#endif  // CHORUS_LIB_NQN_H_
