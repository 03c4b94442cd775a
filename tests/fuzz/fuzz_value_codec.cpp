// Fuzzes swarm::decode (transport/codec.hpp) over several value types.
//
// Input: one byte choosing the type (see `types` below), then the encoded value.
//
// Checked: decode never crashes or throws; whatever decodes encodes again to bytes that
// decode to the same value; encoded_size agrees with encode. For types without maps the
// encoding is canonical, so the value re-encodes to the input itself. A std::map's
// entries may come in any order and are written back sorted, so only its re-encoding is
// stable; an unordered_map is written in hash order, so only its value is.

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <unordered_map>
#include <utility>
#include <vector>

#include "tests/fuzz/sample.hpp"
#include "transport/codec.hpp"

namespace {

using swarm::fuzz::sample;

// A user type whose inspect reads a count and then that many elements by hand, as
// user code may, and rejects some values by returning false.
struct counted {
  std::vector<int16_t> items;
};

template <class Inspector> bool inspect(Inspector& f, counted& x) {
  uint8_t n = static_cast<uint8_t>(x.items.size());
  if (!f(n)) return false;
  x.items.resize(n);
  for (auto& e : x.items)
    if (!f(e) || e < -1000) return false;
  return true;
}

enum class color : uint8_t { red, green, blue };

void check(bool ok, const char* what) {
  if (ok) return;
  std::fprintf(stderr, "fuzz_value_codec: invariant broken: %s\n", what);
  std::abort();
}

enum class form {
  canonical, // the input is the only encoding of its value
  sorted,    // encodings differ in entry order; a re-encoding is stable
  unordered, // encodings differ in entry order; re-encodings may too
};

template <class T, form F> void round_trip(const uint8_t* data, size_t size) {
  T x{};
  std::string why;
  if (!swarm::decode(data, size, x, why)) {
    check(!why.empty(), "a failed decode gave no reason");
    return;
  }
  auto bytes = swarm::encode(x);
  check(bytes.size() == swarm::encoded_size(x), "encoded_size disagrees with encode");
  if constexpr (F == form::canonical)
    check(bytes == std::vector<uint8_t>(data, data + size),
          "a decoded value does not re-encode to its input");
  T y{};
  check(swarm::decode(bytes.data(), bytes.size(), y, why),
        "a re-encoded value does not decode");
  if constexpr (F == form::unordered)
    check(y == x, "a re-encoded value decodes to another value");
  else
    check(swarm::encode(y) == bytes, "decode, encode, decode, encode is not stable");
}

using entry = void (*)(const uint8_t*, size_t);

template <class T, form F = form::canonical> void entry_for(const uint8_t* d, size_t n) {
  round_trip<T, F>(d, n);
}

constexpr entry types[] = {
    entry_for<int64_t>,
    entry_for<std::string>,
    entry_for<std::vector<uint8_t>>,
    entry_for<std::vector<std::string>>,
    entry_for<std::map<std::string, int64_t>, form::sorted>,
    entry_for<std::optional<std::string>>,
    entry_for<std::vector<std::vector<int32_t>>>,
    entry_for<sample>,
    entry_for<std::tuple<bool, double, std::array<uint8_t, 3>, color>>,
    entry_for<std::unordered_map<std::string, std::vector<uint8_t>>, form::unordered>,
    entry_for<std::map<int32_t, std::vector<sample>>, form::sorted>,
    entry_for<counted>,
    entry_for<std::vector<std::pair<std::string, std::optional<double>>>>,
};

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  types[data[0] % std::size(types)](data + 1, size - 1);
  return 0;
}
