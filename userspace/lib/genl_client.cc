#include "lib/genl_client.h"

#include <poll.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <linux/chorus.h>
#include <linux/netlink.h>
#include <netlink/errno.h>
#include <netlink/genl/ctrl.h>
#include <netlink/genl/genl.h>
#include <netlink/msg.h>

#include "lib/errors.h"

namespace chorus {

namespace {

struct NlCbDeleter {
    void operator()(nl_cb* cb) const { nl_cb_put(cb); }
};
using NlCbPtr = std::unique_ptr<nl_cb, NlCbDeleter>;

// libnl reports its own error codes; turn them into the closest errno.
[[noreturn]] void ThrowLibnl(const std::string& what, int nlerr) {
    int e = nlerr < 0 ? -nlerr : nlerr;
    int errnum = EIO;
    switch (e) {
        case NLE_PERM:
            errnum = EPERM;
            break;
        case NLE_NOMEM:
            errnum = ENOMEM;
            break;
        case NLE_OBJ_NOTFOUND:
            errnum = ENOENT;
            break;
        case NLE_AGAIN:
            errnum = EAGAIN;
            break;
        case NLE_INTR:
            errnum = EINTR;
            break;
        case NLE_BAD_SOCK:
            errnum = EBADF;
            break;
        default:
            break;
    }
    throw Error(what + ": " + nl_geterror(e), errnum);
}

std::vector<uint8_t> CopyMessage(nl_msg* msg) {
    const nlmsghdr* nlh = nlmsg_hdr(msg);
    const uint8_t* p = reinterpret_cast<const uint8_t*>(nlh);
    return std::vector<uint8_t>(p, p + nlh->nlmsg_len);
}

// State shared with the libnl callbacks of one Request().
struct Exchange {
    std::vector<std::vector<uint8_t>> replies;
    bool done = false;
    int errnum = 0;
    std::string extack;
};

int OnValid(nl_msg* msg, void* arg) {
    static_cast<Exchange*>(arg)->replies.push_back(CopyMessage(msg));
    return NL_OK;
}

// Notifications are unsolicited and carry sequence number 0: accept any.
int AcceptAnySequence(nl_msg*, void*) {
    return NL_OK;
}

int OnAck(nl_msg*, void* arg) {
    static_cast<Exchange*>(arg)->done = true;
    return NL_STOP;
}

// End of a dump. Since Linux 4.x a failing dump puts its error (and extack)
// into NLMSG_DONE as an int, so look at the payload too.
int OnFinish(nl_msg* msg, void* arg) {
    auto* ex = static_cast<Exchange*>(arg);
    ex->done = true;
    const nlmsghdr* nlh = nlmsg_hdr(msg);
    if (nlh->nlmsg_len >= NLMSG_HDRLEN + sizeof(int)) {
        int err;
        std::memcpy(&err, nlmsg_data(nlh), sizeof(err));
        if (err < 0)
            ex->errnum = -err;
    }
    return NL_STOP;
}

// libnl passes only the nlmsgerr payload; the netlink header sits right
// before it in the receive buffer (iw relies on the same layout), and the
// extack TLVs after it.
int OnError(sockaddr_nl*, nlmsgerr* err, void* arg) {
    auto* ex = static_cast<Exchange*>(arg);
    const auto* nlh =
        reinterpret_cast<const nlmsghdr*>(reinterpret_cast<const uint8_t*>(err) - NLMSG_HDRLEN);
    ex->done = true;
    try {
        NetlinkAck ack = ParseAckMessage(
            std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(nlh), nlh->nlmsg_len));
        ex->errnum = ack.errnum;
        ex->extack = ack.extack;
    } catch (const Error&) {
        ex->errnum = -err->error;
    }
    return NL_STOP;
}

void SetSockOptInt(int fd, int opt) {
    int one = 1;
    // Best effort: kernels older than 4.12 lack extended acks, and the only
    // loss is the detailed message.
    (void)setsockopt(fd, SOL_NETLINK, opt, &one, sizeof(one));
}

}  // namespace

GenlSocket GenlSocket::Open() {
    std::unique_ptr<nl_sock, NlSockDeleter> sock(nl_socket_alloc());
    if (!sock)
        throw Error("cannot allocate a netlink socket", ENOMEM);
    int rc = genl_connect(sock.get());
    if (rc < 0)
        ThrowLibnl("cannot open a generic netlink socket", rc);
    // Dumps of many volumes can exceed a page; let libnl size its buffer.
    nl_socket_enable_msg_peek(sock.get());
    int fd = nl_socket_get_fd(sock.get());
    SetSockOptInt(fd, NETLINK_EXT_ACK);
    // Do not echo our request back inside error acks; we only need the TLVs.
    SetSockOptInt(fd, NETLINK_CAP_ACK);

    int family = genl_ctrl_resolve(sock.get(), CHORUS_GENL_NAME);
    if (family == -NLE_OBJ_NOTFOUND)
        throw ModuleNotLoadedError();
    if (family < 0)
        ThrowLibnl("cannot resolve generic netlink family '" CHORUS_GENL_NAME "'", family);
    return GenlSocket(std::move(sock), family);
}

int GenlSocket::fd() const {
    return nl_socket_get_fd(sock_.get());
}

int GenlSocket::ResolveGroup(const char* group_name) {
    int grp = genl_ctrl_resolve_grp(sock_.get(), CHORUS_GENL_NAME, group_name);
    if (grp < 0)
        ThrowLibnl(std::string("cannot resolve multicast group '") + group_name + "'", grp);
    return grp;
}

std::vector<std::vector<uint8_t>> GenlSocket::Request(const NlMsgPtr& msg) {
    NlCbPtr cb(nl_cb_alloc(NL_CB_DEFAULT));
    if (!cb)
        throw Error("cannot allocate netlink callbacks", ENOMEM);
    Exchange ex;
    nl_cb_set(cb.get(), NL_CB_VALID, NL_CB_CUSTOM, OnValid, &ex);
    nl_cb_set(cb.get(), NL_CB_ACK, NL_CB_CUSTOM, OnAck, &ex);
    nl_cb_set(cb.get(), NL_CB_FINISH, NL_CB_CUSTOM, OnFinish, &ex);
    nl_cb_err(cb.get(), NL_CB_CUSTOM, OnError, &ex);

    // nl_send_auto adds our port, a sequence number and NLM_F_ACK, so every
    // request ends in an ack (or NLMSG_DONE for a dump) we can wait for.
    int rc = nl_send_auto(sock_.get(), msg.get());
    if (rc < 0)
        ThrowLibnl("cannot send the netlink request", rc);
    while (!ex.done) {
        rc = nl_recvmsgs(sock_.get(), cb.get());
        if (rc < 0 && rc != -NLE_INTR) {
            if (ex.errnum != 0)
                break;
            ThrowLibnl("cannot receive the netlink reply", rc);
        }
    }
    if (ex.errnum != 0)
        throw NetlinkError(ex.errnum, ex.extack);
    return std::move(ex.replies);
}

VolumeInfo VolumeClient::Create(const VolumeCreateRequest& req) {
    auto replies = sock_.Request(BuildVolumeCreate(sock_.family(), req));
    if (replies.empty())
        throw Error("the kernel sent no reply to VOLUME_CREATE", EPROTO);
    return ParseVolumeMessage(replies.front());
}

void VolumeClient::Destroy(std::string_view name) {
    sock_.Request(BuildVolumeDestroy(sock_.family(), name));
}

VolumeInfo VolumeClient::AttachDisk(std::string_view name, std::string_view backing_path) {
    auto replies = sock_.Request(BuildDiskAttach(sock_.family(), name, backing_path));
    if (replies.empty())
        throw Error("the kernel sent no reply to DISK_ATTACH", EPROTO);
    return ParseVolumeMessage(replies.front());
}

VolumeInfo VolumeClient::Get(std::string_view name) {
    auto replies = sock_.Request(BuildVolumeGet(sock_.family(), name));
    if (replies.empty())
        throw Error("the kernel sent no reply to VOLUME_GET", EPROTO);
    return ParseVolumeMessage(replies.front());
}

std::vector<VolumeInfo> VolumeClient::List() {
    std::vector<VolumeInfo> out;
    for (const auto& msg : sock_.Request(BuildVolumeDump(sock_.family())))
        out.push_back(ParseVolumeMessage(msg));
    return out;
}

void VolumeClient::Listen(const ListenRequest& req) {
    sock_.Request(BuildListen(sock_.family(), req));
}

void VolumeClient::Unlisten() {
    sock_.Request(BuildUnlisten(sock_.family()));
}

void VolumeClient::PeerAdd(const PeerAddRequest& req) {
    sock_.Request(BuildPeerAdd(sock_.family(), req));
}

void VolumeClient::PeerDel(std::string_view volume, uint32_t node_id) {
    sock_.Request(BuildPeerCommand(sock_.family(), CHORUS_CMD_PEER_DEL, volume, node_id));
}

void VolumeClient::PeerConnect(std::string_view volume, uint32_t node_id) {
    sock_.Request(BuildPeerCommand(sock_.family(), CHORUS_CMD_PEER_CONNECT, volume, node_id));
}

void VolumeClient::PeerDisconnect(std::string_view volume, uint32_t node_id) {
    sock_.Request(BuildPeerCommand(sock_.family(), CHORUS_CMD_PEER_DISCONNECT, volume, node_id));
}

void VolumeClient::SetRole(const SetRoleRequest& req) {
    sock_.Request(BuildSetRole(sock_.family(), req));
}

void VolumeClient::WritesetRemove(std::string_view volume, uint32_t node_id) {
    sock_.Request(BuildPeerCommand(sock_.family(), CHORUS_CMD_WRITESET_REMOVE, volume, node_id));
}

void VolumeClient::VerifyStart(std::string_view volume, uint32_t node_id) {
    sock_.Request(BuildPeerCommand(sock_.family(), CHORUS_CMD_VERIFY_START, volume, node_id));
}

void VolumeClient::Set(const VolumeSetRequest& req) {
    sock_.Request(BuildVolumeSet(sock_.family(), req));
}

void VolumeClient::LeaseSet(uint64_t deadline_ns) {
    sock_.Request(BuildLeaseSet(sock_.family(), deadline_ns));
}

LeaseInfo VolumeClient::LeaseGet() {
    auto replies = sock_.Request(BuildLeaseGet(sock_.family()));
    if (replies.empty())
        throw Error("the kernel sent no reply to LEASE_GET", EPROTO);
    return ParseLeaseMessage(replies.front());
}

void VolumeClient::AuthSet(const AuthSetRequest& req) {
    NlMsgPtr msg = BuildAuthSet(sock_.family(), req);
    // Wipes the message's copy of the secret however the request ends.
    struct Wipe {
        nl_msg* msg;
        ~Wipe() {
            nlmsghdr* h = nlmsg_hdr(msg);
            explicit_bzero(h, h->nlmsg_len);
        }
    } wipe{msg.get()};
    sock_.Request(msg);
}

AuthInfo VolumeClient::AuthGet() {
    auto replies = sock_.Request(BuildAuthGet(sock_.family()));
    if (replies.empty())
        throw Error("the kernel sent no reply to AUTH_GET", EPROTO);
    return ParseAuthMessage(replies.front());
}

EventListener EventListener::Open() {
    GenlSocket sock = GenlSocket::Open();
    int grp = sock.ResolveGroup(CHORUS_GENL_MCGRP_EVENTS);
    int rc = nl_socket_add_membership(sock.get(), grp);
    if (rc < 0)
        ThrowLibnl("cannot join multicast group '" CHORUS_GENL_MCGRP_EVENTS "'", rc);
    rc = nl_socket_set_nonblocking(sock.get());
    if (rc < 0)
        ThrowLibnl("cannot make the event socket non-blocking", rc);
    return EventListener(std::move(sock));
}

std::optional<VolumeInfo> EventListener::Next(std::optional<std::chrono::milliseconds> timeout) {
    using Clock = std::chrono::steady_clock;
    const auto deadline = timeout ? Clock::now() + *timeout : Clock::time_point::max();
    while (pending_.empty()) {
        int wait_ms = -1;
        if (timeout) {
            auto left =
                std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
            if (left.count() <= 0)
                return std::nullopt;
            wait_ms = static_cast<int>(std::min<int64_t>(left.count(), INT32_MAX));
        }
        pollfd pfd = {sock_.fd(), POLLIN, 0};
        int n = poll(&pfd, 1, wait_ms);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            throw Error(std::string("poll on the event socket: ") + std::strerror(errno), errno);
        }
        if (n == 0)
            continue;  // the deadline check above ends the wait

        NlCbPtr cb(nl_cb_alloc(NL_CB_DEFAULT));
        if (!cb)
            throw Error("cannot allocate netlink callbacks", ENOMEM);
        Exchange ex;
        nl_cb_set(cb.get(), NL_CB_VALID, NL_CB_CUSTOM, OnValid, &ex);
        nl_cb_set(cb.get(), NL_CB_SEQ_CHECK, NL_CB_CUSTOM, AcceptAnySequence, nullptr);
        int rc = nl_recvmsgs(sock_.get(), cb.get());
        if (rc < 0 && rc != -NLE_AGAIN && rc != -NLE_INTR) {
            // ENOBUFS: we fell behind and the kernel dropped events. Say so;
            // the socket keeps working.
            if (rc == -NLE_NOMEM)
                throw Error("events were lost: the receive buffer overflowed", ENOBUFS);
            ThrowLibnl("cannot receive events", rc);
        }
        for (auto& m : ex.replies)
            pending_.push_back(std::move(m));
    }
    std::vector<uint8_t> msg = std::move(pending_.front());
    pending_.erase(pending_.begin());
    try {
        return ParseVolumeMessage(msg);
    } catch (const NetlinkError&) {
        throw;
    } catch (const Error& e) {
        throw Error(e.what(), EBADMSG);  // malformed: skip it
    }
}

bool IsRecoverableEventError(const Error& e) {
    return dynamic_cast<const NetlinkError*>(&e) == nullptr &&
           (e.errnum() == ENOBUFS || e.errnum() == EBADMSG);
}

}  // namespace chorus
