#include "lib/metrics_collector.h"

#include <array>
#include <utility>

namespace chorus {

namespace {

template <typename T>
using Getter = std::optional<uint64_t> (*)(const T&);

// A counter or gauge with one sample per volume or per peer.
template <typename T>
struct Metric {
    const char* name;
    const char* type;
    const char* help;
    Getter<T> get;  // nullopt: no sample (the kernel did not say)
};

// A state as a set of 0/1 gauges, one per state the ABI knows, labelled by
// its name: queries select the state by label, and an alert fires on a
// change without knowing the enum's numbers.
template <typename T>
struct StateSet {
    const char* name;
    const char* help;
    const char* label;
    std::vector<uint32_t> values;  // in the enum's order
    std::string (*value_name)(uint32_t);
    std::optional<uint32_t> (*get)(const T&);
};

template <typename F>
std::optional<uint64_t> Widen(const std::optional<F>& v) {
    if (!v)
        return std::nullopt;
    return static_cast<uint64_t>(*v);
}

template <auto Field>
std::optional<uint64_t> StatField(const VolumeInfo& v) {
    if (!v.stats)
        return std::nullopt;
    return (*v.stats).*Field;
}

const Metric<VolumeInfo> kVolumeMetrics[] = {
    {"chorus_volume_reads_total", "counter", "Read requests completed.",
     StatField<&VolumeStats::reads>},
    {"chorus_volume_read_bytes_total", "counter", "Bytes read.",
     StatField<&VolumeStats::read_bytes>},
    {"chorus_volume_writes_total", "counter", "Write requests completed.",
     StatField<&VolumeStats::writes>},
    {"chorus_volume_write_bytes_total", "counter", "Bytes written.",
     StatField<&VolumeStats::write_bytes>},
    {"chorus_volume_flushes_total", "counter", "Flush requests completed.",
     StatField<&VolumeStats::flushes>},
    {"chorus_volume_fua_writes_total", "counter", "Writes completed that carried FUA.",
     StatField<&VolumeStats::fua_writes>},
    {"chorus_volume_discards_total", "counter", "Discard requests completed.",
     StatField<&VolumeStats::discards>},
    {"chorus_volume_write_zeroes_total", "counter", "Write-zeroes requests completed.",
     StatField<&VolumeStats::write_zeroes>},
    {"chorus_volume_errors_total", "counter", "Requests completed with an error.",
     StatField<&VolumeStats::errors>},
    {"chorus_volume_stale_epoch_total", "counter",
     "Replication messages refused for a stale epoch.", StatField<&VolumeStats::stale_epoch>},
    {"chorus_volume_forwarded_total", "counter", "Requests forwarded to the owner.",
     StatField<&VolumeStats::forwarded>},
    {"chorus_volume_forward_resent_total", "counter",
     "Forwarded requests held, then sent to a new owner.", StatField<&VolumeStats::forward_resent>},
    {"chorus_volume_forward_expired_total", "counter",
     "Forwarded requests failed because no owner took them in time.",
     StatField<&VolumeStats::forward_expired>},
    {"chorus_volume_forward_served_total", "counter",
     "Requests forwarded by other nodes and served here as owner.",
     StatField<&VolumeStats::forward_served>},
    {"chorus_volume_degraded_reads_total", "counter",
     "Reads of this owner that a replica served because the owner's disk failed.",
     StatField<&VolumeStats::degraded_reads>},
    {"chorus_volume_payload_crc_checked_total", "counter",
     "Replication messages received whose payload CRC-32C was checked and matched.",
     StatField<&VolumeStats::payload_crc_checked>},
    {"chorus_volume_payload_crc_errors_total", "counter",
     "Replication messages received whose payload did not match its CRC-32C.",
     StatField<&VolumeStats::payload_crc_errors>},
    {"chorus_volume_held_requests", "gauge",
     "Requests held because the node's lease deadline passed.",
     [](const VolumeInfo& v) { return Widen(v.held_io); }},
    {"chorus_volume_epoch", "gauge", "The highest epoch the volume accepted.",
     [](const VolumeInfo& v) { return v.epoch; }},
    {"chorus_volume_size_bytes", "gauge", "Size of the volume.",
     [](const VolumeInfo& v) { return std::optional<uint64_t>(v.size_bytes); }},
    {"chorus_volume_open_count", "gauge", "How many times the block device is open.",
     [](const VolumeInfo& v) { return std::optional<uint64_t>(v.open_count); }},
    {"chorus_volume_disk_failed_timestamp_seconds", "gauge",
     "When the local disk failed and was detached, seconds since the epoch; absent while it "
     "works.",
     [](const VolumeInfo& v) { return v.disk_failed_at; }},
};

const StateSet<VolumeInfo> kVolumeStateSets[] = {
    {"chorus_volume_state",
     "1 for the volume's state: online, or failed (its disk failed and is detached).",
     "state",
     {CHORUS_VOLUME_STATE_ONLINE, CHORUS_VOLUME_STATE_FAILED},
     VolumeStateName,
     [](const VolumeInfo& v) { return std::optional<uint32_t>(v.state); }},
    {"chorus_volume_role",
     "1 for this node's role in the volume.",
     "role",
     {CHORUS_ROLE_OWNER, CHORUS_ROLE_REPLICA},
     RoleName,
     [](const VolumeInfo& v) { return v.role; }},
};

const Metric<PeerInfo> kPeerMetrics[] = {
    {"chorus_peer_in_write_set", "gauge", "1 if a write waits for this peer before completing.",
     [](const PeerInfo& p) { return Widen(p.in_writeset); }},
    {"chorus_peer_disk_failed", "gauge",
     "1 if the peer said its disk failed: its writes are held until it leaves the write set.",
     [](const PeerInfo& p) { return Widen(p.disk_failed); }},
    {"chorus_peer_held_writes", "gauge",
     "Writes waiting for the peer: sent and not yet acknowledged, or waiting for it to store "
     "the activity log.",
     [](const PeerInfo& p) { return Widen(p.held); }},
    {"chorus_peer_activity_log_waiting_writes", "gauge",
     "Of the held writes, those waiting for the peer to store the activity log.",
     [](const PeerInfo& p) { return Widen(p.al_waiting); }},
    {"chorus_peer_dirty_bytes", "gauge", "Data the peer lacks (its dirty bitmap).",
     [](const PeerInfo& p) { return p.dirty_bytes; }},
    {"chorus_peer_resync_total_bytes", "gauge", "Size of the running resync; 0 when none runs.",
     [](const PeerInfo& p) { return p.sync_total_bytes; }},
    {"chorus_peer_resync_done_bytes", "gauge", "Bytes of the running resync done.",
     [](const PeerInfo& p) { return p.sync_done_bytes; }},
    {"chorus_peer_resync_rate_bytes_per_second", "gauge", "Resync speed over the last seconds.",
     [](const PeerInfo& p) { return p.sync_rate; }},
    {"chorus_peer_resynced_bytes_total", "counter", "Bytes resynced to the peer.",
     [](const PeerInfo& p) { return p.resynced_bytes; }},
    {"chorus_peer_verify_running", "gauge", "1 while an online verify with the peer runs.",
     [](const PeerInfo& p) { return Widen(p.verify_running); }},
    {"chorus_peer_verify_done_bytes", "gauge", "Bytes compared by the last or running verify.",
     [](const PeerInfo& p) { return p.verify_done_bytes; }},
    {"chorus_peer_verify_mismatches", "gauge", "Regions that differed in the last verify.",
     [](const PeerInfo& p) { return p.verify_mismatches; }},
    {"chorus_peer_writes_sent_total", "counter", "Writes sent to the peer.",
     [](const PeerInfo& p) { return p.writes_sent; }},
    {"chorus_peer_sent_bytes_total", "counter", "Data bytes sent to the peer.",
     [](const PeerInfo& p) { return p.bytes_sent; }},
    {"chorus_peer_sessions_total", "counter", "Sessions established with the peer.",
     [](const PeerInfo& p) { return p.reconnects; }},
};

const StateSet<PeerInfo> kPeerStateSets[] = {
    {"chorus_peer_connection_state",
     "1 for the state of the connection to the peer.",
     "state",
     {CHORUS_CONN_DISCONNECTED, CHORUS_CONN_CONNECTING, CHORUS_CONN_CONNECTED,
      CHORUS_CONN_UNREACHABLE},
     ConnStateName,
     [](const PeerInfo& p) { return p.conn_state; }},
    {"chorus_peer_replication_state",
     "1 for the state of the peer's replica.",
     "state",
     {CHORUS_REPL_UP_TO_DATE, CHORUS_REPL_OUT_OF_DATE, CHORUS_REPL_SYNCING, CHORUS_REPL_DISKLESS},
     ReplStateName,
     [](const PeerInfo& p) { return p.repl_state; }},
    {"chorus_peer_active_transport",
     "1 for the transport carrying the session; all 0 without one.",
     "transport",
     {CHORUS_TRANSPORT_TCP, CHORUS_TRANSPORT_RDMA},
     TransportName,
     [](const PeerInfo& p) { return p.active_transport; }},
};

constexpr const char* kReadLatency = "chorus_volume_read_latency_seconds";
constexpr const char* kWriteLatency = "chorus_volume_write_latency_seconds";

MetricLabels VolumeLabels(const VolumeInfo& v) {
    return {{"volume", v.name}};
}

MetricLabels PeerLabels(const VolumeInfo& v, const PeerInfo& p) {
    return {{"volume", v.name}, {"peer", std::to_string(p.node_id.value_or(0))}};
}

// A family's HELP and TYPE come with its first sample (any: written yet),
// so that a family the kernel reports nothing of is left out whole.
template <typename T>
void WriteSample(MetricsWriter& w, const Metric<T>& m, bool& any, const MetricLabels& labels,
                 uint64_t value) {
    if (!any)
        w.Family(m.name, m.type, m.help);
    any = true;
    w.Sample(m.name, labels, value);
}

template <typename T>
void WriteStateSet(MetricsWriter& w, const StateSet<T>& set, bool& any, const T& item,
                   MetricLabels labels) {
    std::optional<uint32_t> now = set.get(item);
    if (!now)
        return;
    if (!any)
        w.Family(set.name, "gauge", set.help);
    any = true;
    labels.emplace_back(set.label, "");
    for (uint32_t value : set.values) {
        labels.back().second = set.value_name(value);
        w.Sample(set.name, labels, uint64_t{*now == value});
    }
}

// Histogram bounds in seconds, the same for every histogram.
std::vector<double> LatencyBounds() {
    std::vector<double> bounds;
    for (size_t i = 0; i < CHORUS_LAT_BUCKETS; i++)
        bounds.push_back(LatencyHistogram::BoundSeconds(i));
    return bounds;
}

}  // namespace

std::string MetricsCollector::Collect(const NodeHealth& node,
                                      const std::vector<VolumeInfo>& volumes) {
    MetricsWriter w;
    CollectNode(w, node);
    CollectVolumes(w, volumes);
    CollectLatency(w, volumes);
    CollectPeers(w, volumes);
    return w.text();
}

void MetricsCollector::CollectNode(MetricsWriter& w, const NodeHealth& node) {
    w.Family("chorus_build_info", "gauge", "Always 1; chorusd's version and this node's id.");
    w.Sample("chorus_build_info",
             {{"version", node.version}, {"node", std::to_string(node.node_id)}}, uint64_t{1});
    w.Family("chorus_kernel_up", "gauge", "1 if chorus.ko answered this scrape on netlink.");
    w.Sample("chorus_kernel_up", {}, uint64_t{node.kernel_up});
    if (node.lease_state) {
        w.Family("chorus_lease_state", "gauge", "1 for the state of the node's lease deadline.");
        for (uint32_t s : {CHORUS_LEASE_DISARMED, CHORUS_LEASE_VALID, CHORUS_LEASE_EXPIRED})
            w.Sample("chorus_lease_state", {{"state", LeaseStateName(s)}},
                     uint64_t{*node.lease_state == s});
    }
    if (node.session_held) {
        w.Family("chorus_session_held", "gauge",
                 "1 while chorusd holds its etcd session (its lease renewed within the TTL).");
        w.Sample("chorus_session_held", {}, uint64_t{*node.session_held});
    }
}

void MetricsCollector::CollectVolumes(MetricsWriter& w, const std::vector<VolumeInfo>& volumes) {
    if (volumes.empty())
        return;
    w.Family("chorus_volume_info", "gauge", "Always 1; the volume's block device and uuid.");
    for (const VolumeInfo& v : volumes) {
        MetricLabels labels = VolumeLabels(v);
        labels.emplace_back("device", v.disk_name);
        labels.emplace_back("uuid", FormatUuid(v.uuid));
        labels.emplace_back("diskless", v.diskless ? "1" : "0");
        w.Sample("chorus_volume_info", labels, uint64_t{1});
    }
    for (const auto& m : kVolumeMetrics) {
        bool any = false;
        for (const VolumeInfo& v : volumes)
            if (std::optional<uint64_t> value = m.get(v))
                WriteSample(w, m, any, VolumeLabels(v), *value);
    }
    for (const auto& set : kVolumeStateSets) {
        bool any = false;
        for (const VolumeInfo& v : volumes)
            WriteStateSet(w, set, any, v, VolumeLabels(v));
    }
}

void MetricsCollector::CollectLatency(MetricsWriter& w, const std::vector<VolumeInfo>& volumes) {
    const std::vector<double> bounds = LatencyBounds();
    struct Kind {
        const char* name;
        const char* help;
        std::optional<LatencyHistogram> VolumeStats::*field;
    };
    const Kind kinds[] = {
        {kReadLatency, "Time from a read's arrival in chorus to its completion.",
         &VolumeStats::read_latency},
        {kWriteLatency,
         "Time from a write's arrival in chorus to its completion (on the whole write set).",
         &VolumeStats::write_latency},
    };
    for (const auto& [name, help, field] : kinds) {
        bool any = false;
        for (const VolumeInfo& v : volumes) {
            if (!v.stats || !((*v.stats).*field))
                continue;
            if (!any)
                w.Family(name, "histogram", help);
            any = true;
            const LatencyHistogram& h = *((*v.stats).*field);
            w.Histogram(name, VolumeLabels(v), bounds, h.buckets,
                        static_cast<double>(h.sum_ns) / 1e9);
        }
    }
}

void MetricsCollector::CollectPeers(MetricsWriter& w, const std::vector<VolumeInfo>& volumes) {
    for (const auto& set : kPeerStateSets) {
        bool any = false;
        for (const VolumeInfo& v : volumes)
            for (const PeerInfo& p : v.peers)
                WriteStateSet(w, set, any, p, PeerLabels(v, p));
    }
    for (const auto& m : kPeerMetrics) {
        bool any = false;
        for (const VolumeInfo& v : volumes)
            for (const PeerInfo& p : v.peers)
                if (std::optional<uint64_t> value = m.get(p))
                    WriteSample(w, m, any, PeerLabels(v, p), *value);
    }
}

std::vector<std::string> MetricsCollector::FamilyNames() {
    std::vector<std::string> names = {
        "chorus_build_info",  "chorus_kernel_up", "chorus_lease_state", "chorus_session_held",
        "chorus_volume_info", kReadLatency,       kWriteLatency};
    for (const auto& m : kVolumeMetrics)
        names.emplace_back(m.name);
    for (const auto& s : kVolumeStateSets)
        names.emplace_back(s.name);
    for (const auto& s : kPeerStateSets)
        names.emplace_back(s.name);
    for (const auto& m : kPeerMetrics)
        names.emplace_back(m.name);
    return names;
}

}  // namespace chorus
