// How chorusctl prints volumes and events, for people and for machines.
#ifndef CHORUS_CHORUSCTL_OUTPUT_H_
#define CHORUS_CHORUSCTL_OUTPUT_H_

#include <ostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "lib/genl_codec.h"
#include "lib/meta.h"

namespace chorus {

// "/dev/chorus0".
std::string DevicePath(const VolumeInfo& v);

// Every attribute, numbers as numbers; "event" and "time" are added for
// events by the caller. Attributes the kernel did not send are left out,
// except "peers" and each peer's "paths", which are always arrays.
nlohmann::json VolumeToJson(const VolumeInfo& v);

// Every attribute of a peer the kernel sent, plus "sync_percent" when a
// resync has a size; "active_transport" is "none" when no session carries
// traffic, and "paths" has one object per path the kernel sent.
nlohmann::json PeerToJson(const PeerInfo& p);

// NAME DEVICE SIZE BLOCK STATE BACKING NODE ROLE EPOCH PEERS, columns
// aligned; "-" for what the kernel did not send.
void PrintVolumeTable(std::ostream& out, const std::vector<VolumeInfo>& volumes);

// "key: value" lines with every attribute and counter, the tunables and
// one block per peer, ending with one line per path of the peer.
void PrintVolumeStatus(std::ostream& out, const VolumeInfo& v);

// One line per event: time, event, name, device, size, state; then what the
// event is about: role and epoch, the peer and its states, resync or verify
// progress, and the reason.
// seconds since the epoch as "2026-11-27T06:40:00Z".
std::string FormatUtcSeconds(uint64_t seconds);

std::string FormatEventLine(const std::string& time, const VolumeInfo& v);

// "10.0.0.2:7788", "[fd00::2]:7788".
std::string FormatEndpoint(const std::string& address, uint16_t port);

// Bytes per second: "10.00 MiB/s".
std::string FormatRate(uint64_t bytes_per_sec);

// done of total as "45.2%" (one decimal, never 100.0% before the end).
std::string FormatPercent(uint64_t done, uint64_t total);

// Every superblock field, numbers as numbers, plus the byte sizes derived
// from the sector counts; peers only for slots with a node id.
nlohmann::json MetaSuperToJson(const MetaSuper& s);

// "clean", "dirty", with unknown bits as "0x..." after a comma.
std::string MetaFlagsText(uint32_t flags);

// "key: value" lines of the current superblock and both copies' states.
void PrintMetaInspect(std::ostream& out, const std::string& backing, const MetaRead& m);

// UTC, ISO 8601 with milliseconds: "2026-11-21T03:15:02.123Z".
std::string NowIso8601();

}  // namespace chorus

#endif  // CHORUS_CHORUSCTL_OUTPUT_H_
