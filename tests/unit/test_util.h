// Helpers shared by the unit tests.
#ifndef CHORUS_TESTS_UNIT_TEST_UTIL_H_
#define CHORUS_TESTS_UNIT_TEST_UTIL_H_

#include <map>
#include <string>

namespace chorus::test {

// A fresh directory under $TMPDIR (or /tmp), removed with its contents.
class TempDir {
public:
    TempDir();
    ~TempDir();
    TempDir(const TempDir&) = delete;
    TempDir& operator=(const TempDir&) = delete;

    const std::string& path() const { return path_; }
    std::string operator/(const std::string& rel) const { return path_ + "/" + rel; }

private:
    std::string path_;
};

// Creates parent directories as needed.
void WriteFile(const std::string& path, const std::string& content);
std::string ReadFile(const std::string& path);

// Everything under root: relative path -> "dir", "file:<content> mode:<octal>"
// or "link:<target>", to compare trees before and after.
std::map<std::string, std::string> SnapshotTree(const std::string& root);

// Runs a shell command line, stderr with stdout; returns its exit status
// (-1 if it did not exit), what it printed in out.
int RunShell(const std::string& command, std::string& out);

}  // namespace chorus::test

#endif  // CHORUS_TESTS_UNIT_TEST_UTIL_H_
