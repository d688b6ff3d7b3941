// 16-byte identifiers: volume uuids, NVMe namespace uuids and nguids.
#ifndef CHORUS_LIB_UUID_H_
#define CHORUS_LIB_UUID_H_

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

namespace chorus {

using Uuid = std::array<uint8_t, 16>;

// Parses "3f1c4b6e-0d2a-4b8e-9c1f-2a3b4c5d6e7f" (the canonical 8-4-4-4-12
// form, either case) or the same 32 hex digits without dashes, which is how
// NGUIDs are often written. Throws chorus::Error otherwise.
Uuid ParseUuid(std::string_view text);

// Lower-case canonical form, which is also what nvmet shows in configfs
// ("%pUb"), so written values compare equal to what is read back.
std::string FormatUuid(const Uuid& uuid);

bool IsNullUuid(const Uuid& uuid);

}  // namespace chorus

#endif  // CHORUS_LIB_UUID_H_
