// Reading the versioned JSON values of the cluster store: one place that
// decides what a readable value is, for every key (cluster_store,
// cluster_view). Errors are StoreValueError naming the key.
#ifndef CHORUS_LIB_STORE_VALUE_H_
#define CHORUS_LIB_STORE_VALUE_H_

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "lib/cluster_store.h"

namespace chorus {

inline constexpr int kStoreValueVersion = 1;

// Parses value as a JSON object of the version this chorus knows.
nlohmann::json ParseVersioned(const std::string& key, std::string_view value);

// Field name of j as a T; throws StoreValueError if it is missing or of
// another type.
template <typename T>
T Field(const std::string& key, const nlohmann::json& j, const char* name) {
    auto it = j.find(name);
    if (it == j.end())
        throw StoreValueError(key, std::string("no '") + name + "'");
    try {
        return it->get<T>();
    } catch (const nlohmann::json::exception&) {
        throw StoreValueError(key, std::string("'") + name + "' has the wrong type: " + it->dump());
    }
}

}  // namespace chorus

#endif  // CHORUS_LIB_STORE_VALUE_H_
