// The volume keys of the cluster store (Documentation/cluster.md, "Keys"):
// a volume's spec, its write set and its owner key, with the transactions
// that change them. Every value is versioned JSON; a value that does not
// decode is reported with its key and never acted on.
//
// The owner key is created only if absent, only by a node that is an
// up-to-date member of the write set as it was read, and bound to that
// node's session lease: its create revision is the volume's epoch, so epochs
// grow cluster-wide. A write-set change is guarded by the owner key of the
// node that makes it (DESIGN.md invariant 4): an owner that lost its lease
// cannot change it.
#ifndef CHORUS_LIB_CLUSTER_STORE_H_
#define CHORUS_LIB_CLUSTER_STORE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "lib/errors.h"
#include "lib/etcd_client.h"
#include "lib/uuid.h"

namespace chorus {

std::string VolumeSpecKey(std::string_view volume);  // /chorus/volumes/<name>
std::string WriteSetKey(std::string_view volume);    // /chorus/writeset/<name>
std::string OwnerKey(std::string_view volume);       // /chorus/owner/<name>
std::string MoveKey(std::string_view volume);        // /chorus/move/<name>
std::string ReplaceKey(std::string_view volume);     // /chorus/replace/<name>

// A value in the store that chorus cannot use: not JSON, a field missing or
// of the wrong type, a value out of range, or a version this chorus does not
// know. The message names the key and what is wrong.
class StoreValueError : public Error {
public:
    StoreValueError(const std::string& key, const std::string& what);
};

struct VolumeSpec {
    std::string name;
    uint64_t size_bytes = 0;
    uint32_t replicas = 2;
    std::vector<uint32_t> nodes;    // the nodes that hold a replica, in placement order
    std::string transport = "tcp";  // tcp | rdma | rdma+tcp
    Uuid uuid{};
};

// Who may receive a volume's writes: members are in the write set and up to
// date; out_of_date replicas left it and must resync before they return.
struct WriteSet {
    std::vector<uint32_t> members;
    std::vector<uint32_t> out_of_date;
};

struct Ownership {
    uint32_t node_id = 0;
    int64_t epoch = 0;  // the owner key's create revision
    int64_t lease = 0;  // the owner's session lease
};

// A planned owner change (chorusctl cluster volume move): the owner at
// from_epoch hands the volume to node `to`. The key is bound to the
// target's session lease, so a move to a node that dies is forgotten and
// the ordinary election decides.
struct MoveRequest {
    uint32_t to = 0;
    int64_t from_epoch = 0;
};

// A value with the revision it was last changed at, for compares.
template <typename T>
struct Revisioned {
    T value;
    int64_t mod_revision = 0;
};

// A disk replacement (chorusctl cluster volume replace-disk): node's replica,
// out of date, is detached, its logical volume removed and made again,
// formatted anew, and attached; the owner copies every region to it.
struct ReplaceRequest {
    uint32_t node = 0;
};

std::string EncodeVolumeSpec(const VolumeSpec& spec);
// The owner key as read: the node in its value, its create revision (the
// epoch) and its lease. Throws StoreValueError.
Ownership DecodeOwner(const EtcdKeyValue& kv);
VolumeSpec DecodeVolumeSpec(const std::string& key, std::string_view value);
std::string EncodeWriteSet(const WriteSet& ws);
WriteSet DecodeWriteSet(const std::string& key, std::string_view value);
std::string EncodeMoveRequest(const MoveRequest& m);
MoveRequest DecodeMoveRequest(const std::string& key, std::string_view value);
std::string EncodeReplaceRequest(const ReplaceRequest& r);
ReplaceRequest DecodeReplaceRequest(const std::string& key, std::string_view value);

// Why TakeOwnership did not make this node the owner.
enum class TakeRefusal {
    kNone,
    kOwned,      // the volume has an owner (see ClusterStore::GetOwner)
    kNotMember,  // this node is not an up-to-date member of the write set
    kNoVolume,   // no write set: the volume does not exist
    kRaced,      // the owner key or the write set changed meanwhile: read again
};

class ClusterStore {
public:
    explicit ClusterStore(EtcdClient& etcd) : etcd_(etcd) {}

    // Creates the spec and the first write set in one transaction, only if
    // neither exists. Returns false if the volume exists already.
    bool CreateVolume(const VolumeSpec& spec, const WriteSet& initial);
    std::optional<Revisioned<VolumeSpec>> GetVolume(std::string_view name);
    std::optional<Revisioned<WriteSet>> GetWriteSet(std::string_view name);
    std::optional<Ownership> GetOwner(std::string_view name);

    // Creates the owner key, bound to lease, if there is none and node_id is
    // an up-to-date member of the write set, both as read in one
    // transaction. On success *out has the new epoch.
    TakeRefusal TakeOwnership(std::string_view name, uint32_t node_id, int64_t lease,
                              Ownership* out);

    // Replaces the write set if mine is still the owner key (same epoch and
    // lease) and the write set is still at expected_mod_revision. Returns
    // false if either changed: the caller must not act on the change (the
    // kernel holds the I/O meanwhile) and reads again. A false after an
    // attempt that timed out may be this very change, applied the first
    // time: reading again tells.
    bool ChangeWriteSet(std::string_view name, const Ownership& mine, int64_t expected_mod_revision,
                        const WriteSet& next);

    // Asks the owner at from.epoch to hand the volume to node `to`: creates
    // the move key, bound to target_lease (the target's session), if there
    // is none and the owner key is still from's. False otherwise.
    bool RequestMove(std::string_view name, const Ownership& from, uint32_t to,
                     int64_t target_lease);
    // The owner gives its key up (a planned move, after its kernel stepped
    // down): deletes the owner key if it is still mine. False otherwise.
    bool ReleaseOwnership(std::string_view name, const Ownership& mine);
    // Deletes the move key if it is still at mod_revision (the move is
    // done, or stale).
    bool EndMove(std::string_view name, int64_t mod_revision);

    // Asks node to replace its replica's disk: creates the replace key if
    // there is none and the write set is still at writeset_mod_revision
    // (where the caller saw node out of date). False otherwise.
    bool RequestReplace(std::string_view name, uint32_t node, int64_t writeset_mod_revision);
    // Deletes the replace key if it is still at mod_revision (done, or
    // refused).
    bool EndReplace(std::string_view name, int64_t mod_revision);

    // Deletes the spec, the write set and the owner key in one transaction,
    // if the spec is still at spec_mod_revision (the one the caller checked).
    // The nodes holding replicas then detach them and remove their logical
    // volumes. Returns false if the spec changed or is gone.
    bool DeleteVolume(std::string_view name, int64_t spec_mod_revision);

private:
    EtcdClient& etcd_;
};

}  // namespace chorus

#endif  // CHORUS_LIB_CLUSTER_STORE_H_
