#include "lib/uuid.h"

#include <cstdio>

#include "lib/errors.h"

namespace chorus {

namespace {

int HexValue(char c) {
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

}  // namespace

Uuid ParseUuid(std::string_view text) {
    const bool dashed = text.size() == 36;
    if (!dashed && text.size() != 32)
        throw Error("invalid uuid '" + std::string(text) +
                    "' (expected xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx)");
    Uuid uuid{};
    size_t pos = 0;
    for (size_t i = 0; i < uuid.size(); i++) {
        if (dashed && (pos == 8 || pos == 13 || pos == 18 || pos == 23)) {
            if (text[pos] != '-')
                throw Error("invalid uuid '" + std::string(text) + "': expected '-' at offset " +
                            std::to_string(pos));
            pos++;
        }
        int hi = HexValue(text[pos]);
        int lo = HexValue(text[pos + 1]);
        if (hi < 0 || lo < 0)
            throw Error("invalid uuid '" + std::string(text) + "': not a hex digit at offset " +
                        std::to_string(hi < 0 ? pos : pos + 1));
        uuid[i] = static_cast<uint8_t>(hi << 4 | lo);
        pos += 2;
    }
    return uuid;
}

std::string FormatUuid(const Uuid& u) {
    char buf[37];
    std::snprintf(buf, sizeof(buf),
                  "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", u[0],
                  u[1], u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13],
                  u[14], u[15]);
    return buf;
}

bool IsNullUuid(const Uuid& uuid) {
    for (uint8_t b : uuid)
        if (b != 0)
            return false;
    return true;
}

}  // namespace chorus
