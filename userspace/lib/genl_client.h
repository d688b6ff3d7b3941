// The socket side of the chorus generic netlink ABI: an RAII libnl-genl
// socket bound to the "chorus" family, a volume client on top of it, and a
// listener on the "events" multicast group.
#ifndef CHORUS_LIB_GENL_CLIENT_H_
#define CHORUS_LIB_GENL_CLIENT_H_

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <linux/chorus.h>
#include <netlink/socket.h>

#include "lib/errors.h"
#include "lib/genl_codec.h"

namespace chorus {

struct NlSockDeleter {
    void operator()(nl_sock* sk) const { nl_socket_free(sk); }
};

// A connected generic netlink socket with the chorus family resolved.
// Extended acks are enabled so that errors carry the kernel's message.
class GenlSocket {
public:
    // Throws ModuleNotLoadedError if the chorus family is not registered
    // and chorus::Error for any other failure.
    static GenlSocket Open();

    int family() const { return family_; }
    int fd() const;
    nl_sock* get() const { return sock_.get(); }

    // Sends msg and waits for the answer. Returns every reply message
    // (raw, starting at the nlmsghdr): one for a doit command with a reply,
    // none for one without, all parts for a dump. Throws NetlinkError with
    // the errno and extack message if the kernel refused the request.
    std::vector<std::vector<uint8_t>> Request(const NlMsgPtr& msg);

    // Multicast group id of group_name in this socket's family.
    int ResolveGroup(const char* group_name);

private:
    GenlSocket(std::unique_ptr<nl_sock, NlSockDeleter> sock, int family)
        : sock_(std::move(sock)), family_(family) {}

    std::unique_ptr<nl_sock, NlSockDeleter> sock_;
    int family_;
};

// Volume, peer and listener commands of chorus.ko. Each throws NetlinkError
// (errno and extack message) when the kernel refuses.
class VolumeClient {
public:
    explicit VolumeClient(GenlSocket sock) : sock_(std::move(sock)) {}

    VolumeInfo Create(const VolumeCreateRequest& req);
    void Destroy(std::string_view name);
    VolumeInfo Get(std::string_view name);
    // Replaces the failed disk of a volume this node does not own with
    // backing_path (formatted for it) while the volume runs.
    VolumeInfo AttachDisk(std::string_view name, std::string_view backing_path);
    std::vector<VolumeInfo> List();

    // Replication (CHORUS_CMD_LISTEN .. CHORUS_CMD_VOLUME_SET).
    void Listen(const ListenRequest& req);
    void Unlisten();
    void PeerAdd(const PeerAddRequest& req);
    void PeerDel(std::string_view volume, uint32_t node_id);
    void PeerConnect(std::string_view volume, uint32_t node_id);
    void PeerDisconnect(std::string_view volume, uint32_t node_id);
    void SetRole(const SetRoleRequest& req);
    void WritesetRemove(std::string_view volume, uint32_t node_id);
    void VerifyStart(std::string_view volume, uint32_t node_id);
    void Set(const VolumeSetRequest& req);

    // The node's lease deadline (CHORUS_CMD_LEASE_SET/GET): CLOCK_BOOTTIME
    // nanoseconds, 0 disarms.
    void LeaseSet(uint64_t deadline_ns);
    LeaseInfo LeaseGet();
    // The node's peer secret (CHORUS_CMD_AUTH_SET/GET). The request's copy
    // of a secret is wiped once sent.
    void AuthSet(const AuthSetRequest& req);
    AuthInfo AuthGet();

private:
    GenlSocket sock_;
};

// Receives CHORUS_CMD_EVENT notifications.
class EventListener {
public:
    // Joins the "events" group. Throws like GenlSocket::Open.
    static EventListener Open();

    // Waits up to timeout (forever if nullopt) for the next event and
    // returns it, or nullopt on timeout. Throws chorus::Error on failure;
    // after the errors IsRecoverableEventError() accepts (a malformed
    // event, events lost to a full receive buffer) the listener stays
    // usable, so callers may report them and call Next() again.
    std::optional<VolumeInfo> Next(std::optional<std::chrono::milliseconds> timeout);

private:
    explicit EventListener(GenlSocket sock) : sock_(std::move(sock)) {}

    GenlSocket sock_;
    std::vector<std::vector<uint8_t>> pending_;  // received, not yet returned
};

// True for an error of EventListener::Next() that loses only events, not
// the listener: ENOBUFS (the kernel dropped events) or EBADMSG (an event
// did not parse).
bool IsRecoverableEventError(const Error& e);

}  // namespace chorus

#endif  // CHORUS_LIB_GENL_CLIENT_H_
