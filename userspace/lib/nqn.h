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

inline constexpr size_t kMaxIqnLen = 223;  // RFC 3720, 3.2.6.1

// Why iqn is not usable as an iSCSI name, or "" if it is: it must start
// with "iqn.", be at most 223 bytes, and hold only what an iSCSI name
// keeps after normalisation (RFC 3722): lower-case ASCII letters, digits,
// '-', '.' and ':'.
std::string IqnProblem(std::string_view iqn);

// The iSCSI target name of a subsystem: its NQN with "iqn." for "nqn.",
// lower-cased, so that every node derives the same one. Check the result
// with IqnProblem (an NQN may hold characters an IQN may not).
std::string IqnOf(std::string_view nqn);

}  // namespace chorus

#endif  // CHORUS_LIB_NQN_H_
