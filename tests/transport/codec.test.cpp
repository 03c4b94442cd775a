#include <doctest/doctest.h>

#include <map>
#include <optional>

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
