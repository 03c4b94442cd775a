#pragma once

#include <nanobind/nanobind.h>

#include <memory>
#include <string>
#include <unordered_map>

#include "framework/detail/type_descriptor.hpp"
#include "python/src/shape.hpp"
#include "transport/codec.hpp"

namespace swarm::python {

namespace nb = nanobind;

/// The parsed shapes of the types a session met, each parsed once.
class shape_cache {
public:
  /// The shape of `t`; throws `nb::type_error` naming it when its shape is malformed.
  const shape& of(const detail::type_descriptor& t);

private:
  std::unordered_map<const detail::type_descriptor*, shape> shapes_;
};

/// Vectors of numbers made in Swarm's memory for Python to fill (`swarm.empty`), found
/// again by their memory when Python passes them back, so that they are stored without
/// a copy.
class lent_vectors {
public:
  /// A writable 1-D NumPy array of `n` zeros of the number type `e`, viewing a new
  /// `std::vector` of that type.
  nb::object make(const shape& e, size_t n);
  /// The vector of type `t` whose whole memory is [data, data + bytes); null when none.
  std::shared_ptr<const void> find(const void* data, size_t bytes,
                                   const detail::type_descriptor& t);

private:
  struct entry {
    std::weak_ptr<const void> value;
    const detail::type_descriptor* type;
    size_t bytes;
  };
  std::unordered_map<const void*, entry> by_data_;
};

/// Makes a value of `t` (shaped `s`) from `o`. Throws `nb::type_error` naming `what` (a
/// function's argument, say), the C++ type, what Python value it takes and what `o` is
/// when `o` does not fit; `OverflowError` for a number out of the type's range. Large
/// buffers (a NumPy array's data) are copied into the value once, without the GIL; an
/// array of `lent` (when given) is taken as it is, without a copy, and made read-only.
detail::boxed_value to_value(nb::handle o, const detail::type_descriptor& t,
                             const shape& s, const std::string& what,
                             lent_vectors* lent = nullptr);

/// The Python object of `value`, a `t` shaped `s`: vectors of numbers become read-only
/// NumPy arrays, those of bulk size (`bulk_block_min` bytes or more) viewing the value's
/// memory without a copy (they keep `value` alive). Throws `nb::type_error` for a type
/// Python cannot read (a user type with its own `inspect`).
nb::object to_python(std::shared_ptr<const void> value, const detail::type_descriptor& t,
                     const shape& s);

/// The type `put` stores `o` as: bool, int (int64), float (double), str and bytes
/// (std::string), a 1-D NumPy array of numbers (the vector of its dtype), a list of ints,
/// floats or strs, a dict of str to int, float or str. Throws `nb::type_error` naming
/// what `put` takes for anything else.
const detail::type_descriptor& put_type(nb::handle o);

} // namespace swarm::python
