#include <doctest/doctest.h>

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "framework/device_buffer.hpp"
#include "framework/object_ref.hpp"

using swarm::detail::shape_of;

namespace {

enum class color : uint16_t { red, green };

struct point {
  double x = 0;
  double y = 0;
};

template <class Inspector> bool inspect(Inspector& f, point& p) {
  return f(p.x, p.y);
}

} // namespace

TEST_CASE("the shape of a type describes its encoding for drivers in other languages") {
  CHECK(shape_of<bool>() == "?");
  CHECK(shape_of<int8_t>() == "i1");
  CHECK(shape_of<uint32_t>() == "u4");
  CHECK(shape_of<long>() == "i8");
  CHECK(shape_of<float>() == "f4");
  CHECK(shape_of<double>() == "f8");
  CHECK(shape_of<color>() == "u2");
  CHECK(shape_of<std::string>() == "s");
  CHECK(shape_of<std::vector<float>>() == "v<f4>");
  CHECK(shape_of<std::array<int16_t, 3>>() == "a<3;i2>");
  CHECK(shape_of<std::map<std::string, std::vector<double>>>() == "m<s,v<f8>>");
  CHECK(shape_of<std::unordered_map<int32_t, bool>>() == "m<i4,?>");
  CHECK(shape_of<std::optional<std::string>>() == "o<s>");
  CHECK(shape_of<std::pair<int64_t, std::string>>() == "t<i8,s>");
  CHECK(shape_of<std::tuple<>>() == "t<>");
  CHECK(shape_of<std::tuple<bool, float, std::vector<uint8_t>>>() == "t<?,f4,v<u1>>");
  CHECK(shape_of<swarm::detail::unit>() == "n");
  CHECK(shape_of<swarm::object_ref<int32_t>>() == "r<i4>");
  CHECK(shape_of<swarm::device_buffer>() == "d");
  CHECK(shape_of<point>() == "x");
  CHECK(shape_of<std::vector<point>>() == "v<x>");
  CHECK(swarm::detail::type_of<std::vector<float>>().shape == "v<f4>");
}
