// The peer secret of replication authentication (Documentation/admin-guide.md,
// "Peer authentication"): read from a root-only file and handed to chorus.ko,
// which proves it in every replication handshake; and the CHAP secret of the
// iSCSI export, read the same way. The bytes are never
// printed; they are wiped when the holder goes.
#ifndef CHORUS_LIB_PEER_SECRET_H_
#define CHORUS_LIB_PEER_SECRET_H_

#include <sys/types.h>

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace chorus {

// Secret bytes that are zeroed (explicit_bzero) when destroyed or replaced.
class SecretBytes {
public:
    SecretBytes() = default;
    explicit SecretBytes(std::vector<uint8_t> bytes) : bytes_(std::move(bytes)) {}
    SecretBytes(SecretBytes&& other) noexcept;
    SecretBytes& operator=(SecretBytes&& other) noexcept;
    SecretBytes(const SecretBytes&) = delete;
    SecretBytes& operator=(const SecretBytes&) = delete;
    ~SecretBytes();

    std::span<const uint8_t> bytes() const { return bytes_; }
    size_t size() const { return bytes_.size(); }

private:
    void Wipe();
    std::vector<uint8_t> bytes_;
};

// Reads a peer secret file: a regular file (not a symlink) owned by owner
// (root: 0) with no permission for group or others (mode 0600 or 0400),
// holding CHORUS_AUTH_SECRET_MIN..CHORUS_AUTH_SECRET_MAX bytes; one trailing
// newline is not part of the secret. Throws chorus::Error naming the file and
// what is wrong (its mode, its owner, its size), never its content.
SecretBytes ReadPeerSecret(const std::string& path, uid_t owner = 0);

// The secret of iSCSI CHAP (Documentation/iscsi.md, "CHAP"): read as a peer
// secret is, 12 (RFC 3720's 96 bits) to 255 (LIO's limit) bytes of
// printable ASCII without blanks, as initiators take it as text.
inline constexpr size_t kMinChapSecret = 12;
inline constexpr size_t kMaxChapSecret = 255;
SecretBytes ReadChapSecret(const std::string& path, uid_t owner = 0);

// What both read: a secret file of min..max bytes, kind ("peer secret
// file") and hint (how to make one) named in the errors.
SecretBytes ReadSecretFile(const std::string& path, const std::string& kind, size_t min, size_t max,
                           const std::string& hint, uid_t owner = 0);

// A secret id as chorusctl and chorusd print it: 16 hex digits; "none" for 0.
std::string KeyIdText(uint64_t id);

}  // namespace chorus

#endif  // CHORUS_LIB_PEER_SECRET_H_
