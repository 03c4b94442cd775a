#pragma once

#include <nanobind/nanobind.h>

#include <cstdint>
#include <stdexcept>

#include "python/src/shape.hpp"

namespace swarm::python {

namespace nb = nanobind;

// Calls `f(E{})` with the C++ number type of `s`.
template <class R = nb::object, class F> R with_number(const shape& s, F&& f) {
  switch (s.kind * 16 + static_cast<int>(s.bytes)) {
  case 'i' * 16 + 1:
    return f(int8_t{});
  case 'i' * 16 + 2:
    return f(int16_t{});
  case 'i' * 16 + 4:
    return f(int32_t{});
  case 'i' * 16 + 8:
    return f(int64_t{});
  case 'u' * 16 + 1:
    return f(uint8_t{});
  case 'u' * 16 + 2:
    return f(uint16_t{});
  case 'u' * 16 + 4:
    return f(uint32_t{});
  case 'u' * 16 + 8:
    return f(uint64_t{});
  case 'f' * 16 + 4:
    return f(float{});
  case 'f' * 16 + 8:
    return f(double{});
  default:
    throw std::runtime_error("a number of an unknown size");
  }
}

} // namespace swarm::python
