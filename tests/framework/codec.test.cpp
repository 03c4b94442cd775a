#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <map>
#include <memory>
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
  CHECK_FALSE(static_cast<bool>(desc.decode(bytes.data(), bytes.size(), why, nullptr)));
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
  desc.encode(boxed.ptr.get(), bytes, nullptr);
  std::string why;
  auto back = desc.decode(bytes.data(), bytes.size(), why, nullptr);
  REQUIRE(static_cast<bool>(back));
  CHECK(static_cast<const sample*>(back.get())->pairs == make_sample().pairs);
  CHECK_FALSE(
      static_cast<bool>(desc.decode(bytes.data(), bytes.size() - 1, why, nullptr)));
  CHECK_FALSE(why.empty());
}

namespace {

// A user type whose large buffer sits between small fields.
struct tensor {
  std::string name;
  std::vector<double> values;
  std::vector<int32_t> shape;
  std::string note;
};

template <class Inspector> bool inspect(Inspector& f, tensor& x) {
  return f(x.name, x.values, x.shape, x.note);
}

// Decodes `l` as a receiver would: the head first, then each block copied to where the
// decoded value says it goes.
template <class T> bool receive(const swarm::bulk_layout& l, T& out, std::string& why) {
  swarm::bulk_head h;
  if (swarm::read_bulk_head(l.head.data(), l.head.size(), l.size(), h, why) !=
      swarm::bulk_head_state::ready)
    return false;
  std::vector<std::pair<uint8_t*, size_t>> dests;
  if (!swarm::decode_skeleton(l.head.data(), h, out, dests, why)) return false;
  if (dests.size() != l.blocks.size()) return false;
  for (size_t i = 0; i < dests.size(); ++i)
    std::memcpy(dests[i].first, l.blocks[i].first, dests[i].second);
  return true;
}

} // namespace

TEST_CASE("a bulk layout points at a value's large buffers and a receiver fills them in "
          "place") {
  std::vector<uint8_t> bytes(200 << 10);
  for (size_t i = 0; i < bytes.size(); ++i)
    bytes[i] = static_cast<uint8_t>(i % 251);
  std::string text(100 << 10, 'q');
  auto lb = swarm::lay_out(bytes);
  REQUIRE(lb.blocks.size() == 1);
  CHECK(lb.blocks[0].first == bytes.data()); // a view, not a copy
  CHECK(lb.head.size() < 64);
  std::vector<uint8_t> back;
  std::string why;
  REQUIRE(receive(lb, back, why));
  CHECK(back == bytes);
  auto lt = swarm::lay_out(text);
  REQUIRE(lt.blocks.size() == 1);
  CHECK(lt.blocks[0].first == reinterpret_cast<const uint8_t*>(text.data()));
  std::string text_back;
  REQUIRE(receive(lt, text_back, why));
  CHECK(text_back == text);
}

TEST_CASE("a user type with a buffer member round-trips through a bulk layout, small "
          "fields in its head") {
  tensor t{"weights", std::vector<double>(50'000, 0.25), {100, 500}, "fp64"};
  t.values[123] = -1.5;
  auto l = swarm::lay_out(t);
  REQUIRE(l.blocks.size() == 1);
  CHECK(l.blocks[0].second == t.values.size() * sizeof(double));
  tensor back;
  std::string why;
  REQUIRE(receive(l, back, why));
  CHECK(back.name == t.name);
  CHECK(back.values == t.values);
  CHECK(back.shape == t.shape);
  CHECK(back.note == t.note);
  // Small values have no blocks: the head holds all of it.
  auto small = swarm::lay_out(std::vector<int32_t>{1, 2, 3});
  CHECK(small.blocks.empty());
  std::vector<int32_t> small_back;
  REQUIRE(receive(small, small_back, why));
  CHECK(small_back == std::vector<int32_t>{1, 2, 3});
}

namespace {

// Two large buffers; a receiver is told as parts of the second arrive (a device buffer
// does so to write its bytes to a device as they come).
struct two_buffers {
  std::vector<uint8_t> plain, watched;
  std::shared_ptr<std::vector<std::pair<uint64_t, uint64_t>>> parts; // what landed
  bool small_lands_later = true; // asked after a small read
};

template <class Inspector> bool inspect(Inspector& f, two_buffers& x) {
  uint8_t tag = 7;
  if (!f(x.plain, tag, x.watched)) return false;
  if constexpr (std::is_same_v<Inspector, swarm::binary_reader>) {
    if (f.lands_later()) {
      x.parts = std::make_shared<std::vector<std::pair<uint64_t, uint64_t>>>();
      f.when_landed([p = x.parts](uint64_t offset, uint64_t length) {
        p->emplace_back(offset, length);
      });
    }
    uint8_t after = 0;
    if (!f(after)) return false;
    x.small_lands_later = f.lands_later();
  } else {
    uint8_t after = 0;
    if (!f(after)) return false;
  }
  return true;
}

} // namespace

TEST_CASE("a receiver learns of the parts of a block as they land, counted from the "
          "block's start") {
  two_buffers v;
  v.plain.assign(100 << 10, 1);
  v.watched.assign(200 << 10, 2);
  auto l = swarm::lay_out(v);
  REQUIRE(l.blocks.size() == 2);
  swarm::bulk_head h;
  std::string why;
  REQUIRE(swarm::read_bulk_head(l.head.data(), l.head.size(), l.size(), h, why) ==
          swarm::bulk_head_state::ready);
  two_buffers back;
  std::vector<std::pair<uint8_t*, size_t>> dests;
  std::vector<std::pair<size_t, swarm::detail::block_landed>> landed;
  REQUIRE(swarm::decode_skeleton(l.head.data(), h, back, dests, why, nullptr, &landed));
  REQUIRE(landed.size() == 1);
  CHECK(landed[0].first == 1); // the second block
  CHECK_FALSE(back.small_lands_later);
  bool watched = back.parts != nullptr;
  REQUIRE(watched);
  // Chunks of 96 KiB over the whole layout, the last first: each part of the watched
  // block is reported once, from its own start, whatever the chunks' order.
  std::vector<std::pair<uint64_t, uint64_t>> chunks;
  for (uint64_t at = 0; at < l.size(); at += 96 << 10)
    chunks.emplace_back(at, std::min<uint64_t>(96 << 10, l.size() - at));
  std::swap(chunks.front(), chunks.back());
  for (auto [at, n] : chunks)
    swarm::detail::for_each_block_part(
        h.head_size, dests, landed, at, at + n,
        [](const swarm::detail::block_landed& f, uint64_t lo, uint64_t len) {
          f(lo, len);
          return true;
        });
  auto watched_start = l.head.size() + (100 << 10);
  uint64_t total = 0;
  for (auto [offset, length] : *back.parts) {
    CHECK(offset + length <= (200 << 10));
    auto [at, n] = *std::find_if(chunks.begin(), chunks.end(), [&](auto& c) {
      return c.first <= watched_start + offset &&
             watched_start + offset < c.first + c.second;
    });
    CHECK(watched_start + offset == std::max(at, watched_start)); // where its chunk is
    total += length;
  }
  CHECK(total == (200 << 10));
  CHECK(back.parts->front().first + back.parts->front().second == (200 << 10)); // last
  // Without a place for them, no block lands later.
  two_buffers plain_back;
  dests.clear();
  REQUIRE(swarm::decode_skeleton(l.head.data(), h, plain_back, dests, why));
  bool plain_watched = plain_back.parts != nullptr;
  CHECK_FALSE(plain_watched);
}

TEST_CASE("a bulk head that cannot describe its object is refused with the reason") {
  auto l = swarm::lay_out(std::vector<uint8_t>(100 << 10, 1));
  swarm::bulk_head h;
  std::string why;
  // Too few bytes yet: incomplete, not an error.
  CHECK(swarm::read_bulk_head(l.head.data(), 8, l.size(), h, why) ==
        swarm::bulk_head_state::incomplete);
  // The object is said to be smaller than its blocks.
  CHECK(swarm::read_bulk_head(l.head.data(), l.head.size(), l.size() - 1, h, why) ==
        swarm::bulk_head_state::malformed);
  CHECK(why.find("bulk layout head") != std::string::npos);
  // A block the skeleton reads at another size.
  auto bad = l;
  uint64_t other = (100 << 10) + 8;
  std::memcpy(bad.head.data() + 16, &other, sizeof other);
  REQUIRE(swarm::read_bulk_head(bad.head.data(), bad.head.size(), l.size() + 8, h, why) ==
          swarm::bulk_head_state::ready);
  std::vector<uint8_t> out;
  std::vector<std::pair<uint8_t*, size_t>> dests;
  CHECK_FALSE(swarm::decode_skeleton(bad.head.data(), h, out, dests, why));
  CHECK(why.find("does not match") != std::string::npos);
}
