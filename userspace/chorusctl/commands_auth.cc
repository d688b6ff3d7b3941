// auth set, auth drop-previous, auth clear and auth show: the node's peer
// secret in chorus.ko, which every replication connection proves in its
// handshake (Documentation/admin-guide.md, "Peer authentication"). The
// secret comes from a root-only file; nothing here prints it.
#include <cstdint>
#include <iostream>
#include <string>

#include <linux/chorus.h>

#include "chorusctl/command.h"
#include "chorusctl/commands.h"
#include "lib/errors.h"
#include "lib/peer_secret.h"

namespace chorus {

namespace {

nlohmann::json AuthJson(const AuthInfo& auth) {
    nlohmann::json j = {
        {"set", auth.key_id != 0}, {"key_id", KeyIdText(auth.key_id)}, {"failures", auth.failures}};
    if (auth.prev_key_id != 0) {
        j["previous_key_id"] = KeyIdText(auth.prev_key_id);
        j["previous_remaining_s"] = auth.prev_remaining_s;
    }
    return j;
}

void PrintAuth(const GlobalOptions& global, const AuthInfo& auth) {
    if (global.json) {
        PrintJson(AuthJson(auth));
        return;
    }
    if (auth.key_id == 0)
        std::cout << "peer secret: none (authentication off: trusted networks only)";
    else
        std::cout << "peer secret: set, id " << KeyIdText(auth.key_id);
    if (auth.prev_key_id != 0)
        std::cout << "; previous " << KeyIdText(auth.prev_key_id) << " accepted "
                  << auth.prev_remaining_s << " s more";
    std::cout << " (connections refused since load: " << auth.failures << ")" << std::endl;
}

class AuthSet : public Command {
public:
    void AddOptions(CLI::App& cmd) override {
        cmd.add_option("--secret-file", file_,
                       "The secret: 16 to 128 bytes in a file owned by root, mode 0600")
            ->required();
        cmd.add_option("--keep-previous", keep_s_,
                       "Accept the secret replaced for S more seconds (a rotation), at most "
                       "604800")
            ->check(CLI::Range(1, CHORUS_AUTH_KEEP_MAX_S));
    }

    int Run(const GlobalOptions& global) override {
        SecretBytes secret = ReadPeerSecret(file_);
        VolumeClient client = Connect();
        AuthSetRequest req;
        req.secret = secret.bytes();
        req.keep_previous_s = keep_s_;
        client.AuthSet(req);
        PrintAuth(global, client.AuthGet());
        return kExitOk;
    }

private:
    std::string file_;
    uint32_t keep_s_ = 0;
};

class AuthDrop : public Command {
public:
    explicit AuthDrop(bool clear) : clear_(clear) {}

    void AddOptions(CLI::App&) override {}

    int Run(const GlobalOptions& global) override {
        VolumeClient client = Connect();
        AuthSetRequest req;
        req.drop_previous = !clear_;
        req.clear = clear_;
        client.AuthSet(req);
        PrintAuth(global, client.AuthGet());
        return kExitOk;
    }

private:
    bool clear_;
};

class AuthShow : public Command {
public:
    void AddOptions(CLI::App&) override {}

    int Run(const GlobalOptions& global) override {
        PrintAuth(global, Connect().AuthGet());
        return kExitOk;
    }
};

}  // namespace

std::unique_ptr<Command> NewAuthSet() {
    return std::make_unique<AuthSet>();
}

std::unique_ptr<Command> NewAuthDropPrevious() {
    return std::make_unique<AuthDrop>(false);
}

std::unique_ptr<Command> NewAuthClear() {
    return std::make_unique<AuthDrop>(true);
}

std::unique_ptr<Command> NewAuthShow() {
    return std::make_unique<AuthShow>();
}

}  // namespace chorus
