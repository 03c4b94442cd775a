#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

namespace swarm::python {

/// A parsed type shape (`detail::shape_of`): how a value of a C++ type is encoded.
struct shape {
  /// `?` bool, `i` `u` `f` numbers of `bytes` bytes, `s` string, `v` vector, `a` array of
  /// `count`, `m` map, `o` optional, `t` tuple, `r` object ref, `d` device buffer, `n`
  /// nothing, `x` opaque.
  char kind = 'x';
  size_t bytes = 0;
  size_t count = 0;
  std::vector<shape> items;

  /// Whether it is a number (its values are plain bytes).
  bool number() const { return kind == 'i' || kind == 'u' || kind == 'f'; }
  /// Whether it is a vector of numbers (one buffer of plain bytes).
  bool number_vector() const { return kind == 'v' && items[0].number(); }
  /// Whether values of it can be made and read in Python.
  bool convertible() const;
};

/// Parses `text`; throws `std::invalid_argument` naming where it is malformed.
shape parse_shape(const std::string& text);

} // namespace swarm::python
