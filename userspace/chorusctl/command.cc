#include "chorusctl/command.h"

#include <cerrno>
#include <iostream>

#include "chorusctl/output.h"

namespace chorus {

VolumeClient Connect() {
    return VolumeClient(GenlSocket::Open());
}

void PrintJson(const nlohmann::json& j) {
    std::cout << j.dump(2) << std::endl;
}

int ReportVolume(const GlobalOptions& global, VolumeClient& client, const std::string& volume,
                 const std::string& line) {
    if (global.json)
        PrintJson(VolumeToJson(client.Get(volume)));
    else
        std::cout << line << std::endl;
    return kExitOk;
}

Error InUseError(const std::string& path) {
    return Error("cannot open " + path +
                     ": in use (mounted, or held by a chorus volume or another program) (EBUSY)",
                 EBUSY);
}

}  // namespace chorus
