#include "test_util.h"

#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <memory>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace chorus::test {

namespace fs = std::filesystem;

TempDir::TempDir() {
    const char* base = std::getenv("TMPDIR");
    std::string tmpl = std::string(base != nullptr ? base : "/tmp") + "/chorus-test-XXXXXX";
    if (mkdtemp(tmpl.data()) == nullptr)
        throw std::runtime_error("mkdtemp failed");
    path_ = tmpl;
}

TempDir::~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
}

void WriteFile(const std::string& path, const std::string& content) {
    fs::create_directories(fs::path(path).parent_path());
    std::ofstream out(path, std::ios::trunc);
    out << content;
    if (!out)
        throw std::runtime_error("cannot write " + path);
}

std::string ReadFile(const std::string& path) {
    std::ifstream in(path);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

std::map<std::string, std::string> SnapshotTree(const std::string& root) {
    std::map<std::string, std::string> out;
    for (auto it = fs::recursive_directory_iterator(root); it != fs::recursive_directory_iterator();
         ++it) {
        const fs::path& p = it->path();
        std::string rel = fs::relative(p, root).string();
        if (it->is_symlink()) {
            out[rel] = "link:" + fs::read_symlink(p).string();
            it.disable_recursion_pending();
        } else if (it->is_directory()) {
            out[rel] = "dir";
        } else {
            struct stat st;
            ::stat(p.c_str(), &st);
            std::ostringstream mode;
            mode << std::oct << (st.st_mode & 07777);
            out[rel] = "file:" + ReadFile(p.string()) + " mode:" + mode.str();
        }
    }
    return out;
}

int RunShell(const std::string& command, std::string& out) {
    std::string cmd = command + " 2>&1";
    std::unique_ptr<FILE, int (*)(FILE*)> p(::popen(cmd.c_str(), "r"), ::pclose);
    if (!p)
        throw std::runtime_error("popen failed: " + command);
    std::array<char, 4096> buf;
    out.clear();
    while (size_t n = std::fread(buf.data(), 1, buf.size(), p.get()))
        out.append(buf.data(), n);
    int status = ::pclose(p.release());
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

}  // namespace chorus::test
