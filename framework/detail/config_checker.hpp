#pragma once

// The cluster file's checker and the helpers its readers share
// (framework/cluster_config.cpp only): every problem found is kept with its place and
// key.

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <toml++/toml.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <set>
#include <sstream>
#include <string>
#include <string_view>

#include "base/error.hpp"
#include "base/result.hpp"
#include "framework/cluster_config.hpp"

namespace swarm::detail::config {

// The largest values the keys below take: beyond them a value is a typo, or overflows
// what it sets.
constexpr double max_cpus = 4096;
constexpr int64_t max_gpus = 1024;
constexpr double max_resource = 1e15;
constexpr size_t max_object_store = size_t{1} << 50;
// An object chunk (4 MiB, actors/cluster_tasks.cpp) must fit in a frame, which is
// max_message plus 1 MiB; Cap'n Proto blobs, which carry values, stop short of 512 MiB.
constexpr size_t min_max_message = size_t{4} << 20;
constexpr size_t max_max_message = size_t{256} << 20;

// `n` bytes in the largest binary unit that divides it: "4MiB", "1000".
inline std::string byte_text(size_t n) {
  static const char* units[] = {"", "KiB", "MiB", "GiB", "TiB", "PiB"};
  size_t u = 0;
  while (u + 1 < std::size(units) && n >= 1024 && n % 1024 == 0) {
    n /= 1024;
    ++u;
  }
  return std::to_string(n) + units[u];
}

inline std::string number_text(double x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", x);
  return buf;
}

// The offset of the first byte of `text` that is not part of valid UTF-8 (overlong
// forms, surrogates and code points past U+10FFFF included), or npos.
inline size_t invalid_utf8_at(std::string_view text) {
  size_t i = 0;
  while (i < text.size()) {
    auto c = static_cast<unsigned char>(text[i]);
    if (c < 0x80) {
      ++i;
      continue;
    }
    size_t len = 0;
    uint32_t cp = 0, min = 0;
    if ((c & 0xe0) == 0xc0) {
      len = 2, cp = c & 0x1fu, min = 0x80;
    } else if ((c & 0xf0) == 0xe0) {
      len = 3, cp = c & 0x0fu, min = 0x800;
    } else if ((c & 0xf8) == 0xf0) {
      len = 4, cp = c & 0x07u, min = 0x10000;
    } else {
      return i;
    }
    if (text.size() - i < len) return i;
    for (size_t k = 1; k < len; ++k) {
      auto d = static_cast<unsigned char>(text[i + k]);
      if ((d & 0xc0) != 0x80) return i;
      cp = (cp << 6) | (d & 0x3fu);
    }
    if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return i;
    i += len;
  }
  return std::string_view::npos;
}

// The dotted IPv4 address of `host`: itself when it is one, else its first IPv4 address
// by name lookup (getaddrinfo), so that a node started from the file can use it.
inline result<std::string> resolve_ipv4(const std::string& host) {
  in_addr a{};
  if (::inet_pton(AF_INET, host.c_str(), &a) == 1) return host;
  addrinfo hints{};
  hints.ai_family = AF_INET;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  int rc = ::getaddrinfo(host.c_str(), nullptr, &hints, &found);
  if (rc != 0 || !found)
    return error{errc::invalid_argument,
                 "'" + host + "' is neither an IPv4 address nor a host name with one (" +
                     (rc != 0 ? ::gai_strerror(rc) : "no address") + ")"};
  char buf[INET_ADDRSTRLEN] = {};
  ::inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in*>(found->ai_addr)->sin_addr,
              buf, sizeof buf);
  ::freeaddrinfo(found);
  return std::string{buf};
}

// Validates one parsed file; every problem found is kept with its place and key, one
// line each, in the order found.
class checker {
public:
  explicit checker(std::string source) : source_(std::move(source)) {}

  bool failed() const { return !problems_.empty(); }
  error err() const {
    std::string all;
    for (auto& p : problems_)
      all += (all.empty() ? "" : "\n") + p;
    return {errc::invalid_argument, all};
  }

  void fail(const toml::source_region& where, const std::string& key,
            const std::string& why) {
    std::ostringstream out;
    out << source_;
    if (where.begin.line > 0) out << ':' << where.begin.line << ':' << where.begin.column;
    out << ": " << (key.empty() ? "" : "key `" + key + "`: ") << why;
    if (std::find(problems_.begin(), problems_.end(), out.str()) == problems_.end())
      problems_.push_back(out.str());
  }

  // Rejects keys of `t` not in `known`: a misspelt key must not be silently ignored.
  void only(const toml::table& t, const std::string& prefix,
            std::set<std::string> known) {
    for (auto&& [k, v] : t)
      if (!known.count(std::string{k.str()}))
        fail(k.source(), join(prefix, k.str()),
             "unknown key (known here: " + list(known) + ")");
  }

  // The value of `key`, or nullptr (an error too when it is required).
  const toml::node* lookup(const toml::table& t, const std::string& prefix,
                           const char* key, bool required) {
    auto* n = t.get(key);
    if (!n && required) fail(t.source(), join(prefix, key), "is required");
    return n;
  }

  std::optional<std::string> string(const toml::table& t, const std::string& prefix,
                                    const char* key, bool required) {
    auto* n = lookup(t, prefix, key, required);
    if (!n) return std::nullopt;
    if (!n->is_string()) {
      fail(n->source(), join(prefix, key), "must be a string");
      return std::nullopt;
    }
    return n->value<std::string>();
  }

  std::optional<bool> boolean(const toml::table& t, const std::string& prefix,
                              const char* key) {
    auto* n = lookup(t, prefix, key, false);
    if (!n) return std::nullopt;
    if (!n->is_boolean()) {
      fail(n->source(), join(prefix, key), "must be true or false");
      return std::nullopt;
    }
    return n->value<bool>();
  }

  // A number (integer or not) in [lo, hi].
  std::optional<double> number(const toml::table& t, const std::string& prefix,
                               const char* key, double lo, double hi) {
    auto* n = lookup(t, prefix, key, false);
    if (!n) return std::nullopt;
    double v = lo - 1;
    if (n->is_integer())
      v = static_cast<double>(*n->value<int64_t>());
    else if (n->is_floating_point())
      v = *n->value<double>();
    if (!(v >= lo && v <= hi)) {
      fail(n->source(), join(prefix, key),
           "must be a number between " + number_text(lo) + " and " + number_text(hi));
      return std::nullopt;
    }
    return v;
  }

  // An integer in [lo, hi].
  std::optional<int64_t> integer(const toml::table& t, const std::string& prefix,
                                 const char* key, int64_t lo, int64_t hi, bool required) {
    auto* n = lookup(t, prefix, key, required);
    if (!n) return std::nullopt;
    if (!n->is_integer()) {
      fail(n->source(), join(prefix, key), "must be an integer");
      return std::nullopt;
    }
    auto v = *n->value<int64_t>();
    if (v < lo || v > hi) {
      fail(n->source(), join(prefix, key),
           "must be between " + std::to_string(lo) + " and " + std::to_string(hi) +
               ", got " + std::to_string(v));
      return std::nullopt;
    }
    return v;
  }

  // A byte size in [lo, hi]: an integer, or a string with a unit ("4GiB").
  std::optional<size_t> bytes(const toml::table& t, const std::string& prefix,
                              const char* key, size_t lo, size_t hi) {
    auto* n = t.get(key);
    if (!n) return std::nullopt;
    std::optional<size_t> v;
    if (n->is_integer() && *n->value<int64_t>() >= 0)
      v = static_cast<size_t>(*n->value<int64_t>());
    else if (n->is_string())
      v = parse_byte_size(*n->value<std::string>());
    if (!v) {
      fail(n->source(), join(prefix, key),
           "must be a byte count, e.g. 1048576 or \"1MiB\", \"4GiB\"");
      return std::nullopt;
    }
    if (*v < lo || *v > hi) {
      fail(n->source(), join(prefix, key),
           "must be between " + byte_text(lo) + " and " + byte_text(hi) + ", got " +
               byte_text(*v));
      return std::nullopt;
    }
    return v;
  }

  // "discover" (empty) or a number in [0, hi]; `whole` requires an integer.
  std::optional<std::optional<double>> amount(const toml::table& t,
                                              const std::string& prefix, const char* key,
                                              bool whole, double hi) {
    auto* n = t.get(key);
    if (!n) return std::optional<double>{};
    if (n->is_string() && *n->value<std::string>() == "discover")
      return std::optional<double>{};
    double v = -1;
    if (n->is_integer())
      v = static_cast<double>(*n->value<int64_t>());
    else if (n->is_floating_point() && !whole)
      v = *n->value<double>();
    if (!(v >= 0 && v <= hi)) {
      fail(n->source(), join(prefix, key),
           std::string{"must be \"discover\" or "} + (whole ? "an integer" : "a number") +
               " between 0 and " + number_text(hi));
      return std::nullopt;
    }
    return std::optional<double>{v};
  }

  // `resources`: a table of custom resource = amount (CPU and GPU have keys of their
  // own).
  resource_set resources(const toml::table& t, const std::string& prefix) {
    resource_set out;
    auto* res = t.get("resources");
    if (!res) return out;
    if (!res->is_table()) {
      fail(res->source(), prefix + ".resources", "must be a table of name = amount");
      return out;
    }
    for (auto&& [k, v] : *res->as_table()) {
      auto key = prefix + ".resources." + std::string{k.str()};
      if (k.str() == "CPU" || k.str() == "GPU") {
        fail(k.source(), key, "CPU and GPU are set by `cpus` and `gpus`");
        continue;
      }
      double amount = v.is_integer()          ? static_cast<double>(*v.value<int64_t>())
                      : v.is_floating_point() ? *v.value<double>()
                                              : -1;
      if (!(amount >= 0 && amount <= max_resource))
        fail(v.source(), key,
             "must be a number between 0 and " + number_text(max_resource));
      else
        out.set(std::string{k.str()}, amount);
    }
    return out;
  }

  static std::string join(const std::string& prefix, std::string_view key) {
    return prefix.empty() ? std::string{key} : prefix + "." + std::string{key};
  }

private:
  static std::string list(const std::set<std::string>& keys) {
    std::string out;
    for (auto& k : keys)
      out += (out.empty() ? "" : ", ") + k;
    return out;
  }

  std::string source_;
  std::vector<std::string> problems_;
};

inline const toml::table* table_at(checker& c, const toml::table& root, const char* key) {
  auto* n = root.get(key);
  if (!n) return nullptr;
  if (!n->is_table()) {
    c.fail(n->source(), key, "must be a table ([" + std::string{key} + "])");
    return nullptr;
  }
  return n->as_table();
}

// A token of table `table` (`[http]`, `[jobs]`): printable, long, and not the secret,
// which `holders` hold too; empty when the table has none.
inline std::string read_token(checker& c, const toml::table& t, const std::string& table,
                              const std::string& holders, const std::string& secret) {
  auto token = c.string(t, table, "token", false);
  if (!token) return "";
  auto where = t.get("token")->source();
  auto key = table + ".token";
  if (token->size() < 16)
    c.fail(where, key, "must be at least 16 characters");
  else if (std::any_of(token->begin(), token->end(),
                       [](char ch) { return ch <= ' ' || ch > '~'; }))
    c.fail(where, key, "must be printable ASCII without spaces");
  else if (*token == secret)
    c.fail(where, key, "must differ from cluster.secret (" + holders + ")");
  return *token;
}

} // namespace swarm::detail::config
