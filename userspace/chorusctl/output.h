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
// events by the caller.
nlohmann::json VolumeToJson(const VolumeInfo& v);

// NAME DEVICE SIZE BLOCK STATE BACKING, columns aligned.
void PrintVolumeTable(std::ostream& out, const std::vector<VolumeInfo>& volumes);

// "key: value" lines with every attribute and counter.
void PrintVolumeStatus(std::ostream& out, const VolumeInfo& v);

// One line per event: time, event, name, device, size, state.
std::string FormatEventLine(const std::string& time, const VolumeInfo& v);

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
