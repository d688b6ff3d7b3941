// Typed reading of one TOML table of chorusd's config file (lib/config.h):
// every error names FILE:LINE and the key, and keys nobody asked for are
// reported as unknown.
#ifndef CHORUS_LIB_CONFIG_TABLE_H_
#define CHORUS_LIB_CONFIG_TABLE_H_

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <toml++/toml.h>

namespace chorus {

// A value with the line it was written on, for checks across values (a
// duplicate in a list) that must still name the line.
template <typename T>
struct Located {
    T value;
    int line = 0;
};

// "an integer", "a string", ...: what a TOML value is, for messages.
std::string TomlTypeName(const toml::node& node);

// The line a node was written on (the first line, for a multi-line one).
int TomlLine(const toml::node& node);

// Parses TOML text; a syntax error becomes ConfigError("FILE:LINE: 'key':
// what"), with a hint when the line looks like the INI format chorusd read
// before (unquoted strings, "[port tcp1]").
toml::table ParseToml(std::string_view text, const std::string& file);

// The table's entries in the order they were written (toml::table keeps
// them sorted by key), so that the first mistake in the file is reported.
std::vector<std::pair<const toml::key*, const toml::node*>> InFileOrder(const toml::table& table);

// How messages name a sub-table: "[port.tcp1]", "[port.\"a b\"]".
std::string TableTitle(std::string_view section, std::string_view label);

class ConfigTable {
public:
    // title is how messages name the table, e.g. "[port.tcp1]".
    ConfigTable(const std::string& file, const toml::table& table, std::string title);

    // Throws ConfigError("FILE:LINE: msg").
    [[noreturn]] void Fail(int line, const std::string& msg) const;

    // The table's line (its header), and a key's line (the table's line
    // when the key is absent, which is where a default comes from).
    int Line() const { return line_; }
    int Line(std::string_view key) const;

    // The key's value, or nullptr when absent; a required key's absence is
    // an error. Marks the key as read.
    const toml::node* Find(std::string_view key, bool required);

    // A non-empty string.
    std::optional<std::string> String(std::string_view key, bool required = false);
    // An integer in min..max (TOML also takes 0x hex).
    std::optional<int64_t> Integer(std::string_view key, int64_t min, int64_t max,
                                   bool required = false);
    std::optional<bool> Bool(std::string_view key);
    // An array of non-empty strings, each with its line.
    std::optional<std::vector<Located<std::string>>> StringArray(std::string_view key,
                                                                 bool required = false);
    // An array of integers in min..max, each with its line.
    std::optional<std::vector<Located<int64_t>>> IntegerArray(std::string_view key, int64_t min,
                                                              int64_t max, bool required = false);

    // Every key of the table must have been read.
    void RejectUnknown() const;

    const std::string& title() const { return title_; }

private:
    std::string CheckString(std::string_view key, const toml::node& node) const;
    int64_t CheckInteger(std::string_view key, const toml::node& node, int64_t min,
                         int64_t max) const;
    const toml::array& CheckArray(std::string_view key, const toml::node& node,
                                  std::string_view of) const;

    std::string file_;
    const toml::table& table_;
    std::string title_;
    int line_;
    std::set<std::string, std::less<>> read_;
};

}  // namespace chorus

#endif  // CHORUS_LIB_CONFIG_TABLE_H_
