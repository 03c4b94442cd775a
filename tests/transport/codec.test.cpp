#include <doctest/doctest.h>

#include <array>
#include <cstring>
#include <map>
#include <optional>
#include <stdexcept>
#include <unordered_map>

#include "framework/detail/type_descriptor.hpp"
#include "transport/codec.hpp"

namespace {

struct sample {
  int32_t id = 0;
  std::string name;
  std::vector<float> weights;
  std::map<std::string, int> counts;
  std::optional<double> score;
  std::vector<std::pair<int, std::string>> pairs;
  bool flag = false;
};

template <class Inspector> bool inspect(Inspector& f, sample& x) {
  return f(x.id, x.name, x.weights, x.counts, x.score, x.pairs, x.flag);
}

// Takes 4 KiB in memory, and at least as much encoded (which the codec cannot know).
struct page {
  std::array<uint8_t, 4096> bytes{};
};

template <class Inspector> bool inspect(Inspector& f, page& x) {
  return f(x.bytes);
}

// Throws from inspect while decoding, as user code may.
struct picky {
  int32_t value = 0;
};

template <class Inspector> bool inspect(Inspector& f, picky& x) {
  if (!f(x.value)) return false;
  if (x.value < 0) throw std::domain_error("picky refuses negative values");
  return true;
}

sample make_sample() {
  sample s;
  s.id = 42;
  s.name = "layer";
  s.weights = {1.5f, -2.25f, 3.0f};
  s.counts = {{"a", 1}, {"b", 2}};
  s.score = 0.5;
  s.pairs = {{1, "one"}, {2, "two"}};
  s.flag = true;
  return s;
}

} // namespace

TEST_CASE("a user type with one inspect declaration round-trips through bytes") {
  auto s = make_sample();
  auto bytes = swarm::encode(s);
  CHECK(bytes.size() == swarm::encoded_size(s));
  sample back;
  std::string why;
  REQUIRE(swarm::decode(bytes.data(), bytes.size(), back, why));
  CHECK(back.id == 42);
  CHECK(back.name == "layer");
  CHECK(back.weights == s.weights);
  CHECK(back.counts == s.counts);
  CHECK(back.score == s.score);
  CHECK(back.pairs == s.pairs);
  CHECK(back.flag);
}

TEST_CASE("truncated input is rejected with a reason instead of read past its end") {
  auto bytes = swarm::encode(make_sample());
  for (size_t cut = 0; cut < bytes.size(); ++cut) {
    sample back;
    std::string why;
    REQUIRE_FALSE(swarm::decode(bytes.data(), cut, back, why));
    CHECK_FALSE(why.empty());
  }
}

TEST_CASE("a corrupt length field does not allocate what it claims") {
  std::vector<uint8_t> bytes(8, 0xff); // a vector length of 2^64-1 and nothing after
  std::vector<double> v;
  std::string why;
  CHECK_FALSE(swarm::decode(bytes.data(), bytes.size(), v, why));
  CHECK(why.find("exceeds") != std::string::npos);
}

TEST_CASE("a count is bounded by its elements' smallest encoding, not by one byte each") {
  // 64 MiB claiming one 4 KiB element per byte: 256 GiB if believed.
  std::vector<uint8_t> bytes(64 << 20, 0);
  uint64_t claim = bytes.size() - 8;
  std::memcpy(bytes.data(), &claim, sizeof claim);
  std::vector<std::array<uint8_t, 4096>> pages;
  std::string why;
  CHECK_FALSE(swarm::decode(bytes.data(), bytes.size(), pages, why));
  CHECK(why == "size field exceeds remaining input");
  // Nested containers take at least their own count field each.
  std::vector<std::vector<std::string>> nested;
  CHECK_FALSE(swarm::decode(bytes.data(), bytes.size(), nested, why));
  CHECK(why == "size field exceeds remaining input");
  // The exact count still decodes.
  auto two = swarm::encode(std::vector<std::array<uint8_t, 4096>>(2));
  CHECK(swarm::decode(two.data(), two.size(), pages, why));
  CHECK(pages.size() == 2);
}

TEST_CASE("a count of user types reserves no more memory than the input holds") {
  // A user type's smallest encoding is not known, so its count is only held to one byte
  // per element; what is reserved for it up front is held to the bytes there are.
  std::vector<uint8_t> bytes(64 << 20, 0);
  uint64_t claim = bytes.size() - 8;
  std::memcpy(bytes.data(), &claim, sizeof claim);
  std::vector<page> pages;
  std::string why;
  CHECK_FALSE(swarm::decode(bytes.data(), bytes.size(), pages, why));
  CHECK(why == "truncated input");
}

TEST_CASE("a map with a repeated key is rejected instead of keeping one of its values") {
  auto bytes = swarm::encode(std::vector<std::pair<int32_t, int32_t>>{{1, 2}, {1, 3}});
  std::string why;
  std::map<int32_t, int32_t> ordered;
  CHECK_FALSE(swarm::decode(bytes.data(), bytes.size(), ordered, why));
  CHECK(why == "duplicate map key");
  std::unordered_map<int32_t, int32_t> hashed;
  CHECK_FALSE(swarm::decode(bytes.data(), bytes.size(), hashed, why));
  CHECK(why == "duplicate map key");
  auto distinct = swarm::encode(std::vector<std::pair<int32_t, int32_t>>{{1, 2}, {2, 3}});
  CHECK(swarm::decode(distinct.data(), distinct.size(), ordered, why));
  CHECK(ordered == std::map<int32_t, int32_t>{{1, 2}, {2, 3}});
}

TEST_CASE("an exception while decoding is returned as the reason, not thrown") {
  auto bytes = swarm::encode(int32_t{-1});
  picky x;
  std::string why;
  CHECK_FALSE(swarm::decode(bytes.data(), bytes.size(), x, why));
  CHECK(why == "decoding threw: picky refuses negative values");
  auto& desc = swarm::detail::type_of<picky>();
  CHECK_FALSE(static_cast<bool>(desc.decode(bytes.data(), bytes.size(), why)));
  CHECK(why == "decoding threw: picky refuses negative values");
}

TEST_CASE("empty containers round-trip without copying from or to a null pointer") {
  // UBSan (SWARM_SANITIZE=address) reports memcpy given an empty vector's null data().
  std::vector<double> empty;
  auto bytes = swarm::encode(empty);
  REQUIRE(bytes.size() == 8);
  std::vector<double> back; // its data() is null
  std::string why;
  CHECK(swarm::decode(bytes.data(), bytes.size(), back, why));
  CHECK(back.empty());
  std::vector<std::vector<double>> nested(3);
  bytes = swarm::encode(nested);
  std::vector<std::vector<double>> nested_back;
  CHECK(swarm::decode(bytes.data(), bytes.size(), nested_back, why));
  CHECK(nested_back == nested);
}

TEST_CASE("trailing bytes after a value are an error") {
  auto bytes = swarm::encode(int32_t{7});
  bytes.push_back(0);
  int32_t x = 0;
  std::string why;
  CHECK_FALSE(swarm::decode(bytes.data(), bytes.size(), x, why));
  CHECK(why == "trailing bytes after value");
}

TEST_CASE("encodability is known at compile time") {
  struct opaque {};
  static_assert(swarm::is_encodable_v<std::vector<std::map<std::string, double>>>);
  static_assert(swarm::is_encodable_v<sample>);
  static_assert(!swarm::is_encodable_v<opaque>);
  static_assert(!swarm::is_encodable_v<std::vector<opaque>>);
  CHECK(true);
}

TEST_CASE("a boxed value crosses through bytes with only its run-time descriptor") {
  auto& desc = swarm::detail::type_of<sample>();
  auto boxed = swarm::detail::boxed_value::make(make_sample());
  std::vector<uint8_t> bytes;
  desc.encode(boxed.ptr.get(), bytes);
  std::string why;
  auto back = desc.decode(bytes.data(), bytes.size(), why);
  REQUIRE(static_cast<bool>(back));
  CHECK(static_cast<const sample*>(back.get())->pairs == make_sample().pairs);
  CHECK_FALSE(static_cast<bool>(desc.decode(bytes.data(), bytes.size() - 1, why)));
  CHECK_FALSE(why.empty());
}
