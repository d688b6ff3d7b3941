// Every chorusctl command, made fresh for one run; main.cc's table names
// them and says where they sit in the command tree.
#ifndef CHORUS_CHORUSCTL_COMMANDS_H_
#define CHORUS_CHORUSCTL_COMMANDS_H_

#include <memory>

#include "chorusctl/command.h"

namespace chorus {

// Volumes in chorus.ko (commands_volume.cc).
std::unique_ptr<Command> NewVolumeCreate();
std::unique_ptr<Command> NewVolumeDestroy();
std::unique_ptr<Command> NewVolumeList();
std::unique_ptr<Command> NewVolumeStatus();
std::unique_ptr<Command> NewVolumeRole();
std::unique_ptr<Command> NewVolumeSet();
std::unique_ptr<Command> NewVolumeAttachDisk();

// A backing device's metadata, without the module (commands_backing.cc).
std::unique_ptr<Command> NewVolumeFormat();
std::unique_ptr<Command> NewVolumeInspect();

// The listener, and commands on one peer of a volume (commands_peer.cc).
std::unique_ptr<Command> NewListen();
std::unique_ptr<Command> NewUnlisten();
std::unique_ptr<Command> NewPeerAdd();
std::unique_ptr<Command> NewPeerDel();
std::unique_ptr<Command> NewPeerConnect();
std::unique_ptr<Command> NewPeerDisconnect();
std::unique_ptr<Command> NewWritesetRemove();
std::unique_ptr<Command> NewVolumeVerify();

// The node's lease deadline (commands_lease.cc).
std::unique_ptr<Command> NewLeaseSet();
std::unique_ptr<Command> NewLeaseShow();

// The node's peer secret (commands_auth.cc).
std::unique_ptr<Command> NewAuthSet();
std::unique_ptr<Command> NewAuthDropPrevious();
std::unique_ptr<Command> NewAuthClear();
std::unique_ptr<Command> NewAuthShow();

// The cluster, from its store (commands_cluster.cc, commands_cluster_volume.cc).
std::unique_ptr<Command> NewClusterStatus();
std::unique_ptr<Command> NewNodeList();
std::unique_ptr<Command> NewClusterVolumeCreate();
std::unique_ptr<Command> NewClusterVolumeDelete();
std::unique_ptr<Command> NewClusterVolumeList();
std::unique_ptr<Command> NewClusterVolumeStatus();
std::unique_ptr<Command> NewClusterVolumeMove();
std::unique_ptr<Command> NewClusterVolumeReplaceDisk();

// The cluster's NVMe-oF exports (commands_cluster_export.cc).
std::unique_ptr<Command> NewClusterExportCreate();
std::unique_ptr<Command> NewClusterExportDelete();
std::unique_ptr<Command> NewClusterExportAdd();
std::unique_ptr<Command> NewClusterExportRemove();
std::unique_ptr<Command> NewClusterExportAllow();
std::unique_ptr<Command> NewClusterExportDisallow();
std::unique_ptr<Command> NewClusterExportProtocols();
std::unique_ptr<Command> NewClusterExportList();

// The event stream (commands_events.cc).
std::unique_ptr<Command> NewEvents();

}  // namespace chorus

#endif  // CHORUS_CHORUSCTL_COMMANDS_H_
