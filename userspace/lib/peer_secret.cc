#include "lib/peer_secret.h"

#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include <linux/chorus.h>

#include "lib/errors.h"
#include "lib/fd.h"

namespace chorus {

SecretBytes::SecretBytes(SecretBytes&& other) noexcept : bytes_(std::move(other.bytes_)) {
    other.bytes_.clear();
}

SecretBytes& SecretBytes::operator=(SecretBytes&& other) noexcept {
    if (this != &other) {
        Wipe();
        bytes_ = std::move(other.bytes_);
        other.bytes_.clear();
    }
    return *this;
}

SecretBytes::~SecretBytes() {
    Wipe();
}

void SecretBytes::Wipe() {
    if (!bytes_.empty())
        explicit_bzero(bytes_.data(), bytes_.size());
    bytes_.clear();
}

namespace {

std::string Octal(mode_t mode) {
    char buf[8];
    std::snprintf(buf, sizeof(buf), "%04o", static_cast<unsigned>(mode & 07777));
    return buf;
}

}  // namespace

SecretBytes ReadPeerSecret(const std::string& path, uid_t owner) {
    return ReadSecretFile(path, "peer secret file", CHORUS_AUTH_SECRET_MIN, CHORUS_AUTH_SECRET_MAX,
                          "e.g. head -c 32 /dev/urandom > FILE", owner);
}

SecretBytes ReadChapSecret(const std::string& path, uid_t owner) {
    SecretBytes s = ReadSecretFile(path, "CHAP secret file", kMinChapSecret, kMaxChapSecret,
                                   "e.g. head -c 12 /dev/urandom | base64 > FILE", owner);
    for (uint8_t c : s.bytes())
        if (c < '!' || c > '~')
            throw Error("CHAP secret file '" + path +
                            "' holds a blank or a byte that is not printable ASCII: iSCSI "
                            "initiators take the secret as text",
                        EINVAL);
    return s;
}

SecretBytes ReadSecretFile(const std::string& path, const std::string& kind, size_t min, size_t max,
                           const std::string& hint, uid_t owner) {
    const std::string what = kind + " '" + path + "'";
    Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW));
    if (!fd.valid()) {
        int err = errno;
        if (err == ELOOP)
            throw Error(what + " is a symbolic link: name the file itself", err);
        throw Error("cannot read " + what + ": " + std::strerror(err), err);
    }
    struct stat st {};
    if (::fstat(fd.get(), &st) != 0)
        throw Error("cannot stat " + what + ": " + std::strerror(errno), errno);
    if (!S_ISREG(st.st_mode))
        throw Error(what + " is not a regular file", EINVAL);
    if (st.st_uid != owner)
        throw Error(what + " is owned by uid " + std::to_string(st.st_uid) +
                        ": it must be owned by " +
                        (owner == 0 ? std::string("root") : "uid " + std::to_string(owner)) +
                        " (chown root:root)",
                    EACCES);
    if (st.st_mode & 077)
        throw Error(what + " has mode " + Octal(st.st_mode) +
                        ": it must be readable by its owner only, mode 0600 (chmod 600)",
                    EACCES);
    // One byte more than the most a secret may have, and its newline.
    std::vector<uint8_t> buf(max + 2);
    size_t n = 0;
    for (;;) {
        ssize_t r = ::read(fd.get(), buf.data() + n, buf.size() - n);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            int err = errno;
            explicit_bzero(buf.data(), buf.size());
            throw Error("cannot read " + what + ": " + std::strerror(err), err);
        }
        n += static_cast<size_t>(r);
        if (r == 0 || n == buf.size())
            break;
    }
    size_t len = n;
    if (len > 0 && buf[len - 1] == '\n' && n < buf.size())
        len--;
    if (n == buf.size() || len < min || len > max) {
        explicit_bzero(buf.data(), buf.size());
        throw Error(what + " must hold " + std::to_string(min) + " to " + std::to_string(max) +
                        " bytes (" + hint + "); it holds " +
                        (n == buf.size() ? "more" : std::to_string(len)),
                    EINVAL);
    }
    std::vector<uint8_t> secret(buf.begin(), buf.begin() + static_cast<long>(len));
    explicit_bzero(buf.data(), buf.size());
    return SecretBytes(std::move(secret));
}

std::string KeyIdText(uint64_t id) {
    if (id == 0)
        return "none";
    char buf[17];
    std::snprintf(buf, sizeof(buf), "%016llx", static_cast<unsigned long long>(id));
    return buf;
}

}  // namespace chorus
