#include "lib/config_table.h"

#include <algorithm>
#include <cctype>

#include "lib/config.h"

namespace chorus {

std::string TomlTypeName(const toml::node& node) {
    switch (node.type()) {
        case toml::node_type::table:
            return "a table";
        case toml::node_type::array:
            return "an array";
        case toml::node_type::string:
            return "a string";
        case toml::node_type::integer:
            return "an integer";
        case toml::node_type::floating_point:
            return "a floating-point number";
        case toml::node_type::boolean:
            return "a boolean";
        case toml::node_type::date:
        case toml::node_type::time:
        case toml::node_type::date_time:
            return "a date or time";
        case toml::node_type::none:
            break;
    }
    return "nothing";
}

int TomlLine(const toml::node& node) {
    return static_cast<int>(node.source().begin.line);
}

ConfigTable::ConfigTable(const std::string& file, const toml::table& table, std::string title)
    : file_(file), table_(table), title_(std::move(title)), line_(TomlLine(table)) {}

void ConfigTable::Fail(int line, const std::string& msg) const {
    throw ConfigError(file_ + ":" + std::to_string(line) + ": " + msg);
}

int ConfigTable::Line(std::string_view key) const {
    // The key's own region, not its value's: a multi-line array starts on
    // the key's line.
    auto it = table_.find(key);
    return it == table_.end() ? line_ : static_cast<int>(it->first.source().begin.line);
}

const toml::node* ConfigTable::Find(std::string_view key, bool required) {
    const toml::node* node = table_.get(key);
    if (node == nullptr) {
        if (required)
            Fail(line_, title_ + ": missing required key '" + std::string(key) + "'");
        return nullptr;
    }
    read_.emplace(key);
    return node;
}

std::string ConfigTable::CheckString(std::string_view key, const toml::node& node) const {
    const auto* s = node.as_string();
    if (s == nullptr)
        Fail(TomlLine(node), "'" + std::string(key) + "': expected a string (in quotes), got " +
                                 TomlTypeName(node));
    if (s->get().empty())
        Fail(TomlLine(node), "'" + std::string(key) + "' must not be empty");
    return s->get();
}

int64_t ConfigTable::CheckInteger(std::string_view key, const toml::node& node, int64_t min,
                                  int64_t max) const {
    std::string range = std::to_string(min) + ".." + std::to_string(max);
    const auto* i = node.as_integer();
    if (i == nullptr)
        Fail(TomlLine(node), "'" + std::string(key) + "': expected an integer in " + range +
                                 ", got " + TomlTypeName(node));
    int64_t n = i->get();
    if (n < min || n > max)
        Fail(TomlLine(node),
             "'" + std::string(key) + "': " + std::to_string(n) + " is not in " + range);
    return n;
}

const toml::array& ConfigTable::CheckArray(std::string_view key, const toml::node& node,
                                           std::string_view of) const {
    const auto* a = node.as_array();
    if (a == nullptr)
        Fail(TomlLine(node), "'" + std::string(key) + "': expected an array of " + std::string(of) +
                                 ", e.g. [1, 2], got " + TomlTypeName(node));
    return *a;
}

std::optional<std::string> ConfigTable::String(std::string_view key, bool required) {
    const toml::node* node = Find(key, required);
    if (node == nullptr)
        return std::nullopt;
    return CheckString(key, *node);
}

std::optional<int64_t> ConfigTable::Integer(std::string_view key, int64_t min, int64_t max,
                                            bool required) {
    const toml::node* node = Find(key, required);
    if (node == nullptr)
        return std::nullopt;
    return CheckInteger(key, *node, min, max);
}

std::optional<bool> ConfigTable::Bool(std::string_view key) {
    const toml::node* node = Find(key, false);
    if (node == nullptr)
        return std::nullopt;
    const auto* b = node->as_boolean();
    if (b == nullptr)
        Fail(TomlLine(*node),
             "'" + std::string(key) + "': expected true or false, got " + TomlTypeName(*node));
    return b->get();
}

std::optional<std::vector<Located<std::string>>> ConfigTable::StringArray(std::string_view key,
                                                                          bool required) {
    const toml::node* node = Find(key, required);
    if (node == nullptr)
        return std::nullopt;
    std::vector<Located<std::string>> out;
    for (const toml::node& item : CheckArray(key, *node, "strings"))
        out.push_back({CheckString(key, item), TomlLine(item)});
    return out;
}

std::optional<std::vector<Located<int64_t>>> ConfigTable::IntegerArray(std::string_view key,
                                                                       int64_t min, int64_t max,
                                                                       bool required) {
    const toml::node* node = Find(key, required);
    if (node == nullptr)
        return std::nullopt;
    std::vector<Located<int64_t>> out;
    for (const toml::node& item : CheckArray(key, *node, "integers"))
        out.push_back({CheckInteger(key, item, min, max), TomlLine(item)});
    return out;
}

void ConfigTable::RejectUnknown() const {
    // The first unknown key in the file, not in the table's (sorted) order.
    const toml::key* first = nullptr;
    for (const auto& [key, value] : table_)
        if (read_.count(key.str()) == 0 &&
            (first == nullptr || key.source().begin < first->source().begin))
            first = &key;
    if (first == nullptr)
        return;
    int line = static_cast<int>(first->source().begin.line);
    if (table_.get(first->str())->is_table())  // [node.x], a section inside this one
        Fail(line, "unknown section " + title_.substr(0, title_.size() - 1) + "." +
                       std::string(first->str()) + "]");
    Fail(line, "unknown key '" + std::string(first->str()) + "' in " + title_);
}

}  // namespace chorus

namespace chorus {

namespace {

// Line n (from 1) of text.
std::string_view LineOf(std::string_view text, int n) {
    size_t pos = 0;
    for (int i = 1; i < n && pos != std::string_view::npos; i++) {
        pos = text.find('\n', pos);
        if (pos != std::string_view::npos)
            pos++;
    }
    if (pos == std::string_view::npos || pos > text.size())
        return {};
    return text.substr(pos, text.find('\n', pos) - pos);
}

bool BareKeyChar(char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-';
}

// The key of a "key = value" line, or "" when the line is something else.
std::string KeyOfLine(std::string_view line) {
    size_t b = line.find_first_not_of(" \t");
    if (b == std::string_view::npos)
        return "";
    size_t e = b;
    while (e < line.size() && (BareKeyChar(line[e]) || line[e] == '.'))
        e++;
    size_t eq = line.find_first_not_of(" \t", e);
    if (e == b || eq == std::string_view::npos || line[eq] != '=')
        return "";
    return std::string(line.substr(b, e - b));
}

// Where the INI format chorusd used to read differs from TOML.
std::string SyntaxHint(std::string_view line) {
    size_t b = line.find_first_not_of(" \t");
    if (b != std::string_view::npos && line[b] == '[') {
        size_t sp = line.find_first_of(" \t", b);
        size_t close = line.find(']', b);
        if (sp != std::string_view::npos && close != std::string_view::npos && sp < close)
            return " (a label is written [section.LABEL], e.g. [port.tcp1], [namespace.1])";
        return "";
    }
    if (KeyOfLine(line).empty())
        return "";
    // An unquoted value that is not a plain number: most likely a string
    // without its quotes, or "yes" for true.
    size_t v = line.find_first_not_of(" \t", line.find('=') + 1);
    if (v == std::string_view::npos ||
        std::string_view("\"'[{#").find(line[v]) != std::string_view::npos)
        return "";
    std::string_view value = line.substr(v, line.find_first_of(" \t#", v) - v);
    if (value == "true" || value == "false" ||
        value.find_first_not_of("0123456789abcdefABCDEFxo_+-") == std::string_view::npos)
        return "";
    return " (strings need quotes, key = \"value\"; booleans are true or false)";
}

}  // namespace

toml::table ParseToml(std::string_view text, const std::string& file) {
    try {
        return toml::parse(text, file);
    } catch (const toml::parse_error& e) {
        int line = static_cast<int>(e.source().begin.line);
        std::string_view src = LineOf(text, line);
        std::string key = KeyOfLine(src);
        throw ConfigError(file + ":" + std::to_string(line) + ": " +
                          (key.empty() ? "" : "'" + key + "': ") + std::string(e.description()) +
                          SyntaxHint(src));
    }
}

std::vector<std::pair<const toml::key*, const toml::node*>> InFileOrder(const toml::table& table) {
    std::vector<std::pair<const toml::key*, const toml::node*>> out;
    for (const auto& [key, node] : table)
        out.emplace_back(&key, &node);
    std::stable_sort(out.begin(), out.end(), [](const auto& a, const auto& b) {
        return a.first->source().begin < b.first->source().begin;
    });
    return out;
}

std::string TableTitle(std::string_view section, std::string_view label) {
    bool bare = !label.empty() && std::all_of(label.begin(), label.end(), BareKeyChar);
    std::string l = bare ? std::string(label) : "\"" + std::string(label) + "\"";
    return "[" + std::string(section) + "." + l + "]";
}

}  // namespace chorus
