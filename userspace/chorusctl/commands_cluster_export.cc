// cluster export create, delete, add, remove, allow, disallow, protocols
// and list: the subsystems of the cluster, reached over NVMe-oF and iSCSI
// (Documentation/access.md, Documentation/iscsi.md). Each writes
// /chorus/exports/<nqn> in a transaction guarded by the revision it read;
// every node's chorusd then makes its nvmet match, and list shows what each
// node reports back.
#include <algorithm>
#include <iostream>
#include <string>
#include <vector>

#include "chorusctl/args.h"
#include "chorusctl/cluster_access.h"
#include "chorusctl/command.h"
#include "chorusctl/commands.h"
#include "lib/access_strategy.h"
#include "lib/cluster_export.h"
#include "lib/cluster_view.h"
#include "lib/nqn.h"

namespace chorus {

namespace {

std::string CheckNqnArg(std::string_view s) {
    return NqnProblem(s);
}

// A host as allow and disallow take it: an NVMe host's NQN or an iSCSI
// initiator's IQN.
std::string CheckHostArg(std::string_view s) {
    return s.rfind("iqn.", 0) == 0 ? IqnProblem(s) : NqnProblem(s);
}

void AddProtocols(CLI::App& cmd, std::vector<std::string>& protocols) {
    cmd.add_option("--protocol", protocols,
                   "How hosts reach it: iscsi, nvme-tcp, nvme-rdma (repeat for several); "
                   "default: nvme-tcp and nvme-rdma")
        ->check(CLI::IsMember({kProtocolIscsi, kProtocolNvmeTcp, kProtocolNvmeRdma}));
}

// protocols as a spec keeps them: sorted, the default when none is given.
std::vector<std::string> SpecProtocols(std::vector<std::string> protocols) {
    if (protocols.empty())
        return ExportSpec{}.protocols;
    std::sort(protocols.begin(), protocols.end());
    return protocols;
}

void AddNqn(CLI::App& cmd, std::string& nqn) {
    cmd.add_option("nqn", nqn, "Subsystem NQN")->required()->check(Check(CheckNqnArg, "NQN"));
}

const Revisioned<ExportSpec>& FindExport(const ClusterView& view, const std::string& nqn) {
    auto it = view.exports.find(nqn);
    if (it == view.exports.end())
        throw NotFoundError("no export " + nqn + " in the cluster");
    return it->second;
}

void RequireVolume(const ClusterView& view, const std::string& name) {
    if (view.volumes.count(name) == 0)
        throw NotFoundError("no volume " + name + " in the cluster");
}

// What every node reports of one namespace: {"<node>": {...}}, from its
// nvmet (ANA) or its LIO (ALUA) status.
nlohmann::json Paths(const ClusterView& view, const std::string& nqn, uint32_t nsid,
                     bool iscsi = false) {
    nlohmann::json paths = nlohmann::json::object();
    for (const auto& [id, st] : view.status) {
        const nlohmann::json& n = iscsi ? st.iscsi : st.nvmet;
        const std::string key = std::to_string(nsid);
        if (n.contains(nqn) && n[nqn].contains(key))
            paths[std::to_string(id)] = n[nqn][key];
    }
    return paths;
}

// access: AssignAccessPoints(view), computed once for every export shown.
nlohmann::json ExportToJson(const ClusterView& view,
                            const std::map<std::string, AccessPoint>& access, const ExportSpec& e) {
    nlohmann::json namespaces = nlohmann::json::array();
    for (const ExportNamespace& ns : e.namespaces) {
        nlohmann::json j = {
            {"nsid", ns.nsid}, {"volume", ns.volume}, {"paths", Paths(view, e.nqn, ns.nsid)}};
        if (ExportsBy(e, kProtocolIscsi)) {
            j["lun"] = ns.nsid - 1;
            j["iscsi_paths"] = Paths(view, e.nqn, ns.nsid, true);
        }
        auto v = view.volumes.find(ns.volume);
        if (v != view.volumes.end() && v->second.owner)
            j["owner"] = v->second.owner->node_id;
        if (auto a = access.find(ns.volume); a != access.end())
            j["assigned"] = a->second.node_id;
        namespaces.push_back(j);
    }
    nlohmann::json errors = nlohmann::json::object();
    nlohmann::json iscsi_errors = nlohmann::json::object();
    for (const auto& [id, st] : view.status) {
        if (!st.nvmet_error.empty())
            errors[std::to_string(id)] = st.nvmet_error;
        if (!st.iscsi_error.empty())
            iscsi_errors[std::to_string(id)] = st.iscsi_error;
    }
    nlohmann::json j = {{"nqn", e.nqn},
                        {"strategy", e.strategy},
                        {"protocols", e.protocols},
                        {"hosts", e.hosts},
                        {"initiators", e.initiators},
                        {"allow_any_host", e.allow_any_host},
                        {"namespaces", namespaces},
                        {"node_errors", errors},
                        {"node_iscsi_errors", iscsi_errors}};
    if (ExportsBy(e, kProtocolIscsi))
        j["iqn"] = IqnOf(e.nqn);
    return j;
}

// After a change: the export as the store has it now, with every node's report.
void PrintExportJson(EtcdClient& etcd, const ExportSpec& e) {
    ClusterView view = ReadClusterView(etcd);
    PrintJson(ExportToJson(view, AssignAccessPoints(view), e));
}

// "node 1 optimized  node 2 not exported (why)" from Paths().
void PrintPaths(const nlohmann::json& paths, const char* state_key) {
    if (paths.empty())
        std::cout << " no node reports it yet";
    for (const auto& [id, p] : paths.items()) {
        std::cout << "  node " << id << " ";
        if (p.contains(state_key))
            std::cout << p[state_key].get<std::string>();
        else
            std::cout << "not exported (" << p.value("not_exported", "?") << ")";
    }
    std::cout << '\n';
}

void PrintList(const char* what, const std::vector<std::string>& names, bool any) {
    std::cout << "  " << what << ": ";
    if (any)
        std::cout << "any";
    else if (names.empty())
        std::cout << "none allowed yet (chorusctl cluster export allow)";
    for (size_t i = 0; i < names.size(); i++)
        std::cout << (i ? ", " : "") << names[i];
    std::cout << '\n';
}

void PrintExport(const ClusterView& view, const std::map<std::string, AccessPoint>& access,
                 const ExportSpec& e) {
    const bool iscsi = ExportsBy(e, kProtocolIscsi);
    std::cout << e.nqn << "\n  strategy: " << e.strategy << "\n  protocols: ";
    for (size_t i = 0; i < e.protocols.size(); i++)
        std::cout << (i ? ", " : "") << e.protocols[i];
    std::cout << '\n';
    if (ExportsNvme(e))
        PrintList("hosts", e.hosts, e.allow_any_host);
    if (iscsi) {
        std::cout << "  iSCSI target: " << IqnOf(e.nqn) << '\n';
        PrintList("initiators", e.initiators, e.allow_any_host);
    }
    if (e.namespaces.empty())
        std::cout << "  no namespaces (chorusctl cluster export add)\n";
    for (const ExportNamespace& ns : e.namespaces) {
        std::cout << "  nsid " << ns.nsid << "  " << ns.volume;
        auto v = view.volumes.find(ns.volume);
        if (v != view.volumes.end() && v->second.owner)
            std::cout << " (owner node " << v->second.owner->node_id;
        else
            std::cout << " (no owner";
        if (auto a = access.find(ns.volume); a != access.end())
            std::cout << ", assigned node " << a->second.node_id;
        std::cout << ")\n";
        if (ExportsNvme(e)) {
            std::cout << "    ANA: ";
            PrintPaths(Paths(view, e.nqn, ns.nsid), "ana_state");
        }
        if (iscsi) {
            std::cout << "    ALUA (LUN " << ns.nsid - 1 << "): ";
            PrintPaths(Paths(view, e.nqn, ns.nsid, true), "alua_state");
        }
    }
    for (const auto& [id, st] : view.status) {
        if (!st.nvmet_error.empty())
            std::cout << "  node " << id << " cannot apply its nvmet export: " << st.nvmet_error
                      << '\n';
        if (!st.iscsi_error.empty())
            std::cout << "  node " << id << " cannot apply its iSCSI export: " << st.iscsi_error
                      << '\n';
    }
}

// Why spec cannot be served over iSCSI beside the view's other exports
// ("" if it can): NQNs differing in case only make the same target name.
std::string IqnTaken(const ClusterView& view, const ExportSpec& spec) {
    if (!ExportsBy(spec, kProtocolIscsi))
        return "";
    for (const auto& [nqn, e] : view.exports)
        if (nqn != spec.nqn && ExportsBy(e.value, kProtocolIscsi) && IqnOf(nqn) == IqnOf(spec.nqn))
            return "export " + nqn + " is served over iSCSI as " + IqnOf(nqn) +
                   " already: NQNs that differ in case only make the same iSCSI name";
    return "";
}

// Reads the export, lets change edit it, writes it back if unchanged since.
template <typename Change>
ExportSpec Modify(EtcdClient& etcd, const std::string& nqn, Change change) {
    ClusterView view = ReadClusterView(etcd);
    const Revisioned<ExportSpec>& current = FindExport(view, nqn);
    ExportSpec next = current.value;
    change(view, next);
    if (std::string p = ExportSpecProblem(next); !p.empty())
        throw UsageError(p);
    if (std::string p = IqnTaken(view, next); !p.empty())
        throw UsageError(p);
    if (!ExportStore(etcd).Replace(next, current.mod_revision))
        throw Error("export " + nqn + " changed meanwhile: look again", EAGAIN);
    return next;
}

class ExportCreate : public Command {
public:
    void AddOptions(CLI::App& cmd) override {
        AddNqn(cmd, nqn_);
        cmd.add_option("--volume", volumes_, "A volume to export (nsid 1, 2, ... in order)");
        cmd.add_option("--host", hosts_, "The NQN of a host allowed to connect");
        cmd.add_option("--initiator", initiators_,
                       "The IQN of an iSCSI initiator allowed to log in");
        cmd.add_flag("--allow-any-host", any_, "Let every host connect (no allow-list)");
        AddProtocols(cmd, protocols_);
        cmd.add_option("--strategy", strategy_,
                       "Where its volumes are owned (their optimized path): balance, inherit "
                       "or none")
            ->check(CLI::IsMember({"balance", "inherit", "none"}))
            ->capture_default_str();
        access_.AddOptions(cmd);
    }
    std::string Subject() const override { return nqn_; }

    int Run(const GlobalOptions& global) override {
        ExportSpec spec{nqn_, hosts_, any_, {}, strategy_, SpecProtocols(protocols_), initiators_};
        for (size_t i = 0; i < volumes_.size(); i++)
            spec.namespaces.push_back({static_cast<uint32_t>(i + 1), volumes_[i]});
        if (std::string p = ExportSpecProblem(spec); !p.empty())
            throw UsageError(p);
        auto etcd = access_.Connect();
        ClusterView view = ReadClusterView(*etcd);
        for (const std::string& v : volumes_)
            RequireVolume(view, v);
        if (std::string p = IqnTaken(view, spec); !p.empty())
            throw UsageError(p);
        if (!ExportStore(*etcd).Create(spec))
            throw Error("export " + nqn_ + " exists already", EEXIST);
        if (global.json)
            PrintJson(ExportToJson(view, AssignAccessPoints(view), spec));
        else
            std::cout << "created export " << nqn_ << " (" << spec.namespaces.size()
                      << " namespaces)" << std::endl;
        return kExitOk;
    }

private:
    std::string nqn_;
    std::vector<std::string> volumes_, hosts_, initiators_, protocols_;
    std::string strategy_ = "balance";
    bool any_ = false;
    ClusterAccess access_;
};

class ExportDelete : public Command {
public:
    void AddOptions(CLI::App& cmd) override {
        AddNqn(cmd, nqn_);
        access_.AddOptions(cmd);
    }
    std::string Subject() const override { return nqn_; }

    int Run(const GlobalOptions& global) override {
        auto etcd = access_.Connect();
        ClusterView view = ReadClusterView(*etcd);
        const Revisioned<ExportSpec>& e = FindExport(view, nqn_);
        if (!ExportStore(*etcd).Delete(nqn_, e.mod_revision))
            throw Error("export " + nqn_ + " changed meanwhile: look again", EAGAIN);
        if (global.json)
            PrintJson({{"nqn", nqn_}, {"deleted", true}});
        else
            std::cout << "deleted export " << nqn_ << std::endl;
        return kExitOk;
    }

private:
    std::string nqn_;
    ClusterAccess access_;
};

// add / remove a namespace.
class ExportNamespaceChange : public Command {
public:
    explicit ExportNamespaceChange(bool add) : add_(add) {}

    void AddOptions(CLI::App& cmd) override {
        AddNqn(cmd, nqn_);
        AddVolumeName(cmd, volume_);
        if (add_)
            cmd.add_option("--nsid", nsid_, "Namespace id; default: the lowest free one")
                ->check(CLI::Range(1u, kMaxExportNsid));
        access_.AddOptions(cmd);
    }
    std::string Subject() const override { return nqn_ + " " + volume_; }

    int Run(const GlobalOptions& global) override {
        auto etcd = access_.Connect();
        uint32_t nsid = 0;
        ExportSpec spec = Modify(*etcd, nqn_, [&](const ClusterView& view, ExportSpec& e) {
            auto it = std::find_if(e.namespaces.begin(), e.namespaces.end(),
                                   [&](const ExportNamespace& ns) { return ns.volume == volume_; });
            if (!add_) {
                if (it == e.namespaces.end())
                    throw NotFoundError("export " + nqn_ + " has no namespace of volume " +
                                        volume_);
                nsid = it->nsid;
                e.namespaces.erase(it);
                return;
            }
            RequireVolume(view, volume_);
            if (it != e.namespaces.end())
                throw Error("volume " + volume_ + " is namespace " + std::to_string(it->nsid) +
                                " of " + nqn_ + " already",
                            EEXIST);
            nsid = nsid_ ? nsid_ : FreeNsid(e);
            e.namespaces.push_back({nsid, volume_});
            std::sort(e.namespaces.begin(), e.namespaces.end(),
                      [](const auto& a, const auto& b) { return a.nsid < b.nsid; });
        });
        if (global.json)
            PrintExportJson(*etcd, spec);
        else
            std::cout << (add_ ? "added " : "removed ") << volume_ << " as namespace " << nsid
                      << (add_ ? " of " : " from ") << nqn_ << std::endl;
        return kExitOk;
    }

private:
    bool add_;
    std::string nqn_, volume_;
    uint32_t nsid_ = 0;
    ClusterAccess access_;
};

// allow / disallow a host.
class ExportHostChange : public Command {
public:
    explicit ExportHostChange(bool allow) : allow_(allow) {}

    void AddOptions(CLI::App& cmd) override {
        AddNqn(cmd, nqn_);
        cmd.add_option("host", host_,
                       "The host's NQN (nvme show-hostnqn), or an iSCSI initiator's IQN "
                       "(/etc/iscsi/initiatorname.iscsi)")
            ->required()
            ->check(Check(CheckHostArg, "HOST"));
        access_.AddOptions(cmd);
    }
    std::string Subject() const override { return nqn_ + " " + host_; }

    int Run(const GlobalOptions& global) override {
        auto etcd = access_.Connect();
        ExportSpec spec = Modify(*etcd, nqn_, [&](const ClusterView&, ExportSpec& e) {
            std::vector<std::string>& list = host_.rfind("iqn.", 0) == 0 ? e.initiators : e.hosts;
            auto it = std::find(list.begin(), list.end(), host_);
            if (allow_ && it != list.end())
                throw Error("host " + host_ + " is allowed already", EEXIST);
            if (allow_ && e.allow_any_host)
                throw UsageError("export " + nqn_ +
                                 " lets any host connect: there is no "
                                 "allow-list to add to");
            if (!allow_ && it == list.end())
                throw NotFoundError("host " + host_ + " is not allowed on " + nqn_);
            if (allow_)
                list.push_back(host_);
            else
                list.erase(it);
        });
        if (global.json)
            PrintExportJson(*etcd, spec);
        else
            std::cout << (allow_ ? "allowed " : "disallowed ") << host_ << " on " << nqn_
                      << std::endl;
        return kExitOk;
    }

private:
    bool allow_;
    std::string nqn_, host_;
    ClusterAccess access_;
};

// protocols: how hosts reach an export from now on.
class ExportProtocols : public Command {
public:
    void AddOptions(CLI::App& cmd) override {
        AddNqn(cmd, nqn_);
        AddProtocols(cmd, protocols_);
        cmd.get_option("--protocol")->required();
        access_.AddOptions(cmd);
    }
    std::string Subject() const override { return nqn_; }

    int Run(const GlobalOptions& global) override {
        auto etcd = access_.Connect();
        ExportSpec spec = Modify(*etcd, nqn_, [&](const ClusterView&, ExportSpec& e) {
            e.protocols = SpecProtocols(protocols_);
        });
        if (global.json) {
            PrintExportJson(*etcd, spec);
        } else {
            std::cout << nqn_ << " is reached by";
            for (const std::string& p : spec.protocols)
                std::cout << ' ' << p;
            std::cout << std::endl;
        }
        return kExitOk;
    }

private:
    std::string nqn_;
    std::vector<std::string> protocols_;
    ClusterAccess access_;
};

class ExportList : public Command {
public:
    void AddOptions(CLI::App& cmd) override { access_.AddOptions(cmd); }

    int Run(const GlobalOptions& global) override {
        auto etcd = access_.Connect();
        ClusterView view = ReadClusterView(*etcd);
        const std::map<std::string, AccessPoint> access = AssignAccessPoints(view);
        if (global.json) {
            nlohmann::json all = nlohmann::json::array();
            for (const auto& [nqn, e] : view.exports)
                all.push_back(ExportToJson(view, access, e.value));
            PrintJson(all);
            return kExitOk;
        }
        if (view.exports.empty())
            std::cout << "no exports (chorusctl cluster export create)" << std::endl;
        for (const auto& [nqn, e] : view.exports)
            PrintExport(view, access, e.value);
        return kExitOk;
    }

private:
    ClusterAccess access_;
};

}  // namespace

std::unique_ptr<Command> NewClusterExportCreate() {
    return std::make_unique<ExportCreate>();
}
std::unique_ptr<Command> NewClusterExportDelete() {
    return std::make_unique<ExportDelete>();
}
std::unique_ptr<Command> NewClusterExportAdd() {
    return std::make_unique<ExportNamespaceChange>(true);
}
std::unique_ptr<Command> NewClusterExportRemove() {
    return std::make_unique<ExportNamespaceChange>(false);
}
std::unique_ptr<Command> NewClusterExportAllow() {
    return std::make_unique<ExportHostChange>(true);
}
std::unique_ptr<Command> NewClusterExportDisallow() {
    return std::make_unique<ExportHostChange>(false);
}
std::unique_ptr<Command> NewClusterExportProtocols() {
    return std::make_unique<ExportProtocols>();
}
std::unique_ptr<Command> NewClusterExportList() {
    return std::make_unique<ExportList>();
}

}  // namespace chorus
