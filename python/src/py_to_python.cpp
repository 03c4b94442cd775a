// A value to Python: read from its bulk layout, numbers into NumPy arrays.

#include <nanobind/ndarray.h>

#include <cstring>
#include <map>
#include <stdexcept>
#include <utility>
#include <vector>

#include "python/src/py_values.hpp"
#include "python/src/with_number.hpp"

namespace swarm::python {

namespace {

// -- a value to Python -----------------------------------------------------------------

// Reads a bulk layout (`type_descriptor::lay_out`) the way `binary_reader` reads one.
class layout_reader {
public:
  layout_reader(const bulk_layout& l, std::shared_ptr<const void> value)
      : blocks_(l.blocks), value_(std::move(value)) {
    uint64_t skeleton = 0, count = 0;
    std::memcpy(&skeleton, l.head.data(), 8);
    std::memcpy(&count, l.head.data() + 8, 8);
    pos_ = l.head.data() + 16 + 8 * count;
    end_ = pos_ + skeleton;
  }

  // `n` bytes; `block` says whether they are a bulk block (the value's own memory).
  const uint8_t* raw(size_t n, bool& block) {
    block = n >= bulk_block_min;
    if (block) {
      if (next_ >= blocks_.size() || blocks_[next_].second != n)
        throw std::runtime_error("a value's layout does not match its shape");
      return blocks_[next_++].first;
    }
    if (static_cast<size_t>(end_ - pos_) < n)
      throw std::runtime_error("a value's layout is shorter than its shape");
    auto* p = pos_;
    pos_ += n;
    return p;
  }
  uint64_t count() {
    bool block = false;
    uint64_t v = 0;
    std::memcpy(&v, raw(8, block), 8);
    return v;
  }
  // An owner that keeps the value alive for arrays that view it.
  nb::capsule owner() const {
    return nb::capsule(new std::shared_ptr<const void>(value_), [](void* p) noexcept {
      delete static_cast<std::shared_ptr<const void>*>(p);
    });
  }

private:
  const std::vector<std::pair<const uint8_t*, size_t>>& blocks_;
  std::shared_ptr<const void> value_;
  const uint8_t* pos_;
  const uint8_t* end_;
  size_t next_ = 0;
};

template <class E>
nb::object numpy_array(const uint8_t* p, size_t n, bool view, const layout_reader& r) {
  if (view)
    return nb::ndarray<nb::numpy, const E, nb::ndim<1>>(reinterpret_cast<const E*>(p),
                                                        {n}, r.owner())
        .cast();
  auto* copy = new E[n > 0 ? n : 1];
  if (n > 0) std::memcpy(copy, p, n * sizeof(E));
  nb::capsule owner(copy, [](void* q) noexcept { delete[] static_cast<E*>(q); });
  return nb::ndarray<nb::numpy, const E, nb::ndim<1>>(copy, {n}, owner).cast();
}

template <class E> E read_number(layout_reader& r) {
  bool block = false;
  E v{};
  std::memcpy(&v, r.raw(sizeof(E), block), sizeof(E));
  return v;
}

nb::object decode(const shape& s, layout_reader& r) {
  switch (s.kind) {
  case '?':
    return nb::bool_(read_number<uint8_t>(r) != 0);
  case 'i':
  case 'u':
  case 'f':
    return with_number(s, [&r](auto e) -> nb::object {
      using E = decltype(e);
      return nb::cast(read_number<E>(r));
    });
  case 's': {
    auto n = r.count();
    bool block = false;
    auto* p = reinterpret_cast<const char*>(r.raw(n, block));
    PyObject* str = PyUnicode_DecodeUTF8(p, static_cast<Py_ssize_t>(n), nullptr);
    if (str != nullptr) return nb::steal(str);
    PyErr_Clear(); // not text: the bytes as they are
    return nb::steal(PyBytes_FromStringAndSize(p, static_cast<Py_ssize_t>(n)));
  }
  case 'v': {
    auto n = r.count();
    if (s.number_vector())
      return with_number(s.items[0], [&](auto e) -> nb::object {
        using E = decltype(e);
        bool block = false;
        auto* p = r.raw(n * sizeof(E), block);
        return numpy_array<E>(p, n, block, r);
      });
    nb::list out;
    for (uint64_t i = 0; i < n; ++i)
      out.append(decode(s.items[0], r));
    return std::move(out);
  }
  case 'a': {
    nb::list out;
    for (size_t i = 0; i < s.count; ++i)
      out.append(decode(s.items[0], r));
    return std::move(out);
  }
  case 't': {
    nb::list out;
    for (auto& item : s.items)
      out.append(decode(item, r));
    return nb::steal(PySequence_Tuple(out.ptr()));
  }
  case 'm': {
    auto n = r.count();
    nb::dict out;
    for (uint64_t i = 0; i < n; ++i) {
      auto k = decode(s.items[0], r);
      out[k] = decode(s.items[1], r);
    }
    return std::move(out);
  }
  case 'o':
    if (read_number<uint8_t>(r) == 0) return nb::none();
    return decode(s.items[0], r);
  case 'd': {
    if (read_number<uint8_t>(r) == 0) {
      auto n = r.count();
      bool block = false;
      auto* p = r.raw(n, block);
      return numpy_array<uint8_t>(p, n, block, r);
    }
    auto n = r.count();
    bool block = false;
    auto* p = reinterpret_cast<const char*>(r.raw(n, block));
    std::string why(p, n);
    nb::object lost = nb::module_::import_("swarm._swarm").attr("ObjectLostError");
    PyErr_SetString(lost.ptr(), ("the device buffer was lost: " + why).c_str());
    throw nb::python_error();
  }
  case 'n':
    return nb::none();
  default:
    throw std::runtime_error("a value Python cannot read");
  }
}

} // namespace

nb::object to_python(std::shared_ptr<const void> value, const detail::type_descriptor& t,
                     const shape& s) {
  if (!s.convertible())
    throw nb::type_error((t.name + " cannot be read in Python: a user type with its own "
                                   "inspect, or an object ref inside a value")
                             .c_str());
  auto layout = t.lay_out(value.get(), nullptr);
  layout_reader r{layout, std::move(value)};
  try {
    return decode(s, r);
  } catch (const std::runtime_error& e) {
    throw nb::type_error((t.name + ": " + e.what()).c_str());
  }
}

} // namespace swarm::python
