// Base64 (RFC 4648, standard alphabet, padded) for the bytes fields of etcd's
// JSON gateway: Go's encoding/json writes []byte that way.
#ifndef CHORUS_LIB_ETCD_BASE64_H_
#define CHORUS_LIB_ETCD_BASE64_H_

#include <optional>
#include <string>
#include <string_view>

namespace chorus {

std::string Base64Encode(std::string_view bytes);

// nullopt unless text is well-formed padded base64: a length that is a
// multiple of 4, only alphabet characters, '=' only as the last one or two.
std::optional<std::string> Base64Decode(std::string_view text);

}  // namespace chorus

#endif  // CHORUS_LIB_ETCD_BASE64_H_
