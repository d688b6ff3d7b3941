#include "lib/cluster_export.h"

#include <algorithm>
#include <set>

#include <nlohmann/json.hpp>

#include "lib/access_strategy.h"
#include "lib/nqn.h"
#include "lib/store_value.h"
#include "lib/volume_validate.h"

namespace chorus {

namespace {

using Json = nlohmann::json;
using R = EtcdCompare::Result;

ExportNamespace DecodeNamespace(const std::string& key, const Json& j) {
    if (!j.is_object())
        throw StoreValueError(key, "a namespace is not an object: " + j.dump());
    int64_t nsid = Field<int64_t>(key, j, "nsid");
    if (nsid < 1 || nsid > kMaxExportNsid)
        throw StoreValueError(key, "nsid " + std::to_string(nsid) + " is not in 1.." +
                                       std::to_string(kMaxExportNsid));
    return {static_cast<uint32_t>(nsid), Field<std::string>(key, j, "volume")};
}

}  // namespace

bool ExportsBy(const ExportSpec& spec, std::string_view protocol) {
    return std::find(spec.protocols.begin(), spec.protocols.end(), protocol) !=
           spec.protocols.end();
}

bool ExportsNvme(const ExportSpec& spec) {
    return ExportsBy(spec, kProtocolNvmeRdma) || ExportsBy(spec, kProtocolNvmeTcp);
}

std::string ProtocolsProblem(const std::vector<std::string>& protocols) {
    if (protocols.empty())
        return "no protocol: name at least one of iscsi, nvme-rdma, nvme-tcp";
    std::set<std::string> seen;
    for (const std::string& p : protocols) {
        if (p != kProtocolIscsi && p != kProtocolNvmeRdma && p != kProtocolNvmeTcp)
            return "unknown protocol '" + p + "' (iscsi, nvme-rdma or nvme-tcp)";
        if (!seen.insert(p).second)
            return "protocol " + p + " is named twice";
    }
    return "";
}

std::string ExportKey(std::string_view nqn) {
    return "/chorus/exports/" + std::string(nqn);
}

std::string ExportSpecProblem(const ExportSpec& spec) {
    if (std::string p = NqnProblem(spec.nqn); !p.empty())
        return "subsystem NQN " + p;
    std::set<std::string> hosts;
    for (const std::string& h : spec.hosts) {
        if (std::string p = NqnProblem(h); !p.empty())
            return "host NQN " + p;
        if (!hosts.insert(h).second)
            return "host " + h + " is listed twice";
    }
    if (std::string p = StrategyProblem(spec.strategy); !p.empty())
        return p;
    if (spec.allow_any_host && !spec.hosts.empty())
        return "allow_any_host is set and hosts are listed: nvmet takes one or the other";
    if (std::string p = ProtocolsProblem(spec.protocols); !p.empty())
        return p;
    if (ExportsBy(spec, kProtocolIscsi))
        if (std::string p = IqnProblem(IqnOf(spec.nqn)); !p.empty())
            return "subsystem " + spec.nqn + " cannot be exported over iSCSI: its target name " + p;
    std::set<std::string> initiators;
    for (const std::string& i : spec.initiators) {
        if (std::string p = IqnProblem(i); !p.empty())
            return "initiator " + p;
        if (!initiators.insert(i).second)
            return "initiator " + i + " is listed twice";
    }
    if (spec.allow_any_host && !spec.initiators.empty())
        return "allow_any_host is set and initiators are listed: take one or the other";
    std::set<uint32_t> ids;
    std::set<std::string> volumes;
    for (const ExportNamespace& ns : spec.namespaces) {
        if (ns.nsid < 1 || ns.nsid > kMaxExportNsid)
            return "nsid " + std::to_string(ns.nsid) + " is not in 1.." +
                   std::to_string(kMaxExportNsid);
        if (!ids.insert(ns.nsid).second)
            return "nsid " + std::to_string(ns.nsid) + " is used twice";
        if (std::string p = CheckVolumeName(ns.volume); !p.empty())
            return "namespace " + std::to_string(ns.nsid) + ": " + p;
        if (!volumes.insert(ns.volume).second)
            return "volume " + ns.volume + " is exported twice";
    }
    return "";
}

std::string EncodeExportSpec(const ExportSpec& spec) {
    Json namespaces = Json::array();
    for (const ExportNamespace& ns : spec.namespaces)
        namespaces.push_back({{"nsid", ns.nsid}, {"volume", ns.volume}});
    return Json{{"version", kStoreValueVersion}, {"nqn", spec.nqn},
                {"hosts", spec.hosts},           {"allow_any_host", spec.allow_any_host},
                {"namespaces", namespaces},      {"strategy", spec.strategy},
                {"protocols", spec.protocols},   {"initiators", spec.initiators}}
        .dump();
}

ExportSpec DecodeExportSpec(const std::string& key, std::string_view value) {
    Json j = ParseVersioned(key, value);
    ExportSpec s;
    s.nqn = Field<std::string>(key, j, "nqn");
    if (key != ExportKey(s.nqn))
        throw StoreValueError(key, "names subsystem '" + s.nqn + "'");
    s.hosts = Field<std::vector<std::string>>(key, j, "hosts");
    s.allow_any_host = Field<bool>(key, j, "allow_any_host");
    if (j.contains("strategy"))
        s.strategy = Field<std::string>(key, j, "strategy");
    if (j.contains("protocols")) {
        s.protocols = Field<std::vector<std::string>>(key, j, "protocols");
        std::sort(s.protocols.begin(), s.protocols.end());
    }
    if (j.contains("initiators"))
        s.initiators = Field<std::vector<std::string>>(key, j, "initiators");
    Json namespaces = Field<Json>(key, j, "namespaces");
    if (!namespaces.is_array())
        throw StoreValueError(key, "'namespaces' is not an array");
    for (const Json& ns : namespaces)
        s.namespaces.push_back(DecodeNamespace(key, ns));
    std::sort(s.namespaces.begin(), s.namespaces.end(),
              [](const auto& a, const auto& b) { return a.nsid < b.nsid; });
    if (std::string p = ExportSpecProblem(s); !p.empty())
        throw StoreValueError(key, p);
    return s;
}

uint32_t FreeNsid(const ExportSpec& spec) {
    uint32_t id = 1;
    for (const ExportNamespace& ns : spec.namespaces)  // ascending
        if (ns.nsid == id)
            id++;
    return id;
}

std::optional<Revisioned<ExportSpec>> ExportStore::Get(std::string_view nqn) {
    const std::string key = ExportKey(nqn);
    EtcdRangeResult r = etcd_.Range(EtcdKeys::Key(key));
    if (r.kvs.empty())
        return std::nullopt;
    return Revisioned<ExportSpec>{DecodeExportSpec(key, r.kvs[0].value), r.kvs[0].mod_revision};
}

bool ExportStore::Create(const ExportSpec& spec) {
    const std::string key = ExportKey(spec.nqn);
    return etcd_.Txn({EtcdCompare::Absent(key)}, {EtcdOp::Put(key, EncodeExportSpec(spec))})
        .succeeded;
}

bool ExportStore::Replace(const ExportSpec& spec, int64_t mod_revision) {
    const std::string key = ExportKey(spec.nqn);
    return etcd_
        .Txn({EtcdCompare::ModRevision(key, R::kEqual, mod_revision)},
             {EtcdOp::Put(key, EncodeExportSpec(spec))})
        .succeeded;
}

bool ExportStore::Delete(std::string_view nqn, int64_t mod_revision) {
    const std::string key = ExportKey(nqn);
    return etcd_
        .Txn({EtcdCompare::ModRevision(key, R::kEqual, mod_revision)},
             {EtcdOp::Delete(EtcdKeys::Key(key))})
        .succeeded;
}

}  // namespace chorus
