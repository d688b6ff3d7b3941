// cluster status and cluster node list: the cluster as its store has it,
// readable from any node (Documentation/chorusctl.rst, "Cluster commands").
#include <iomanip>
#include <iostream>
#include <string>

#include "chorusctl/cluster_access.h"
#include "chorusctl/cluster_output.h"
#include "chorusctl/command.h"
#include "chorusctl/commands.h"
#include "lib/cluster_view.h"

namespace chorus {

namespace {

class ClusterStatus : public Command {
public:
    void AddOptions(CLI::App& cmd) override { access_.AddOptions(cmd); }

    int Run(const GlobalOptions& global) override {
        auto etcd = access_.Connect();
        ClusterView view = ReadClusterView(*etcd);
        VolumeHealthCount count = CountHealth(view);
        if (global.json) {
            PrintJson({{"revision", view.revision},
                       {"endpoints", etcd->options().endpoints},
                       {"nodes", view.nodes.size()},
                       {"volumes", view.volumes.size()},
                       {"volumes_healthy", count.healthy},
                       {"volumes_degraded", count.degraded},
                       {"volumes_without_owner", count.ownerless},
                       {"problems", view.problems}});
            return kExitOk;
        }
        std::cout << "store: etcd at revision " << view.revision << '\n'
                  << "nodes: " << view.nodes.size() << " with a live session\n"
                  << "volumes: " << view.volumes.size() << " (" << count.healthy << " healthy, "
                  << count.degraded << " degraded, " << count.ownerless << " without an owner)\n";
        for (const std::string& p : view.problems)
            std::cout << "problem: " << p << '\n';
        return kExitOk;
    }

private:
    ClusterAccess access_;
};

class NodeList : public Command {
public:
    void AddOptions(CLI::App& cmd) override { access_.AddOptions(cmd); }

    int Run(const GlobalOptions& global) override {
        auto etcd = access_.Connect();
        ClusterView view = ReadClusterView(*etcd);
        if (global.json) {
            nlohmann::json nodes = nlohmann::json::array();
            for (const auto& [id, rec] : view.nodes)
                nodes.push_back(NodeToJson(view, rec));
            PrintJson(nodes);
            return kExitOk;
        }
        PrintNodeTable(std::cout, view);
        return kExitOk;
    }

private:
    ClusterAccess access_;
};

}  // namespace

std::unique_ptr<Command> NewClusterStatus() {
    return std::make_unique<ClusterStatus>();
}

std::unique_ptr<Command> NewNodeList() {
    return std::make_unique<NodeList>();
}

}  // namespace chorus
