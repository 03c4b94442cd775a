#include "python/src/py_values.hpp"

#include <nanobind/ndarray.h>

#include "base/ready_memory.hpp"
#include "python/src/with_number.hpp"

#include <cstring>
#include <limits>
#include <map>
#include <stdexcept>
#include <utility>
#include <vector>

namespace swarm::python {

namespace {

// -- shapes in words -------------------------------------------------------------------

std::string described(const shape& s) {
  switch (s.kind) {
  case '?':
    return "a bool";
  case 'i':
  case 'u':
    return "an int";
  case 'f':
    return "a float";
  case 's':
    return "a str or bytes";
  case 'v':
    return s.number_vector() ? "a 1-D NumPy array or a list of numbers"
                             : "a list of " + described(s.items[0]);
  case 'a':
    return "a sequence of " + std::to_string(s.count);
  case 'm':
    return "a dict";
  case 'o':
    return "None or " + described(s.items[0]);
  case 't':
    return "a tuple of " + std::to_string(s.items.size());
  case 'd':
    return "a buffer (bytes or a NumPy array)";
  case 'n':
    return "None";
  default:
    return "a value Python cannot make";
  }
}

std::string py_type(nb::handle o) {
  return Py_TYPE(o.ptr())->tp_name;
}

[[noreturn]] void mismatch(const std::string& what, const detail::type_descriptor& t,
                           const shape& s, nb::handle o) {
  throw nb::type_error(
      (what + " (" + t.name + "): expected " + described(s) + ", got " + py_type(o))
          .c_str());
}

// -- Python to a value -----------------------------------------------------------------

// A NumPy array's (or any buffer's) memory, held while the value is made.
class buffer_view {
public:
  buffer_view() = default;
  buffer_view(const buffer_view&) = delete;
  buffer_view& operator=(const buffer_view&) = delete;
  ~buffer_view() { release(); }
  void release() {
    if (held_) PyBuffer_Release(&view_);
    held_ = false;
  }
  // Takes `o`'s buffer, C-contiguous with its format; false (no error set) when it has
  // none.
  bool take(nb::handle o) {
    if (!PyObject_CheckBuffer(o.ptr())) return false;
    if (PyObject_GetBuffer(o.ptr(), &view_, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT) != 0) {
      PyErr_Clear();
      return false;
    }
    held_ = true;
    return true;
  }
  const Py_buffer& view() const { return view_; }

private:
  Py_buffer view_{};
  bool held_ = false;
};

// The element kind ('i', 'u', 'f', '?') of a buffer format, or 0.
char format_kind(const char* format) {
  if (format == nullptr) return 'u'; // plain bytes
  while (*format == '@' || *format == '=' || *format == '<')
    ++format;
  if (format[0] == 0 || format[1] != 0) return 0;
  switch (format[0]) {
  case 'b':
  case 'h':
  case 'i':
  case 'l':
  case 'q':
    return 'i';
  case 'B':
  case 'H':
  case 'I':
  case 'L':
  case 'Q':
    return 'u';
  case 'e':
  case 'f':
  case 'd':
    return 'f';
  case '?':
    return '?';
  default:
    return 0;
  }
}

// The encoding of a value written the way `basic_writer` writes it, laid out as
// `segment_sink` lays it out: small writes copied, large ones viewed where they are.
class layout_writer {
public:
  void raw(const void* p, size_t n) {
    auto* b = static_cast<const uint8_t*>(p);
    if (n >= bulk_block_min)
      blocks.emplace_back(b, n);
    else
      skeleton.insert(skeleton.end(), b, b + n);
  }
  void count(size_t n) {
    auto v = static_cast<uint64_t>(n);
    raw(&v, sizeof v);
  }
  // Keeps bytes made here (a list's numbers) until the value is made.
  std::vector<uint8_t>& scratch() { return scratch_.emplace_back(); }
  buffer_view& view() { return *views_.emplace_back(std::make_unique<buffer_view>()); }

  std::vector<uint8_t> skeleton;
  std::vector<std::pair<const uint8_t*, size_t>> blocks;

private:
  std::vector<std::vector<uint8_t>> scratch_;
  std::vector<std::unique_ptr<buffer_view>> views_;
};

// Throws `nb::type_error` naming `what` and `t` unless `b` is a 1-D buffer of `e`s.
void check_numbers(const Py_buffer& b, const shape& e, const std::string& what,
                   const detail::type_descriptor& t) {
  if (b.ndim > 1)
    throw nb::type_error((what + " (" + t.name + "): expected a 1-D array, got " +
                          std::to_string(b.ndim) + " dimensions (pass a.ravel())")
                             .c_str());
  char kind = format_kind(b.format);
  if (kind != e.kind || static_cast<size_t>(b.itemsize) != e.bytes)
    throw nb::type_error((what + " (" + t.name + "): expected " +
                          (e.kind == 'f'   ? "float"
                           : e.kind == 'i' ? "int"
                                           : "uint") +
                          std::to_string(8 * e.bytes) + " data, got buffer format '" +
                          (b.format ? b.format : "B") + "' of " +
                          std::to_string(b.itemsize) + " bytes (convert with astype)")
                             .c_str());
}

// A vector of numbers made straight from `o`'s buffer when `t` is a plain
// `std::vector<E>`: one pass over the data, without the GIL (decoding would zero the
// vector first). Null when `o` has no buffer or `t` is another vector type.
std::shared_ptr<const void> vector_from_buffer(nb::handle o,
                                               const detail::type_descriptor& t,
                                               const shape& s, const std::string& what,
                                               lent_vectors* lent) {
  PyObject* p = o.ptr();
  if (PyUnicode_Check(p) || PyList_Check(p) || PyTuple_Check(p)) return nullptr;
  return with_number<std::shared_ptr<const void>>(
      s.items[0], [&](auto e) -> std::shared_ptr<const void> {
        using E = decltype(e);
        if (!detail::same_type(t, detail::type_of<std::vector<E>>())) return nullptr;
        buffer_view v;
        if (!v.take(o)) return nullptr;
        check_numbers(v.view(), s.items[0], what, t);
        if (lent)
          if (auto same =
                  lent->find(v.view().buf, static_cast<size_t>(v.view().len), t)) {
            // Stored as it is: it must not change from now on.
            v.release();
            if (PyObject_SetAttrString(nb::getattr(o, "flags", nb::none()).ptr(),
                                       "writeable", Py_False) != 0)
              PyErr_Clear();
            return same;
          }
        auto out = std::make_shared<std::vector<E>>();
        auto* first = static_cast<const E*>(v.view().buf);
        auto n = static_cast<size_t>(v.view().len) / sizeof(E);
        nb::gil_scoped_release unlocked;
        out->reserve(n);
        if (n * sizeof(E) >= ready_memory_min) ready_memory(out->data(), n * sizeof(E));
        out->assign(first, first + n);
        return out;
      });
}

struct encoder {
  const detail::type_descriptor& type;
  const std::string& what;
  layout_writer& w;

  [[noreturn]] void fail(const shape& s, nb::handle o, const std::string& where) const {
    mismatch(what + where, type, s, o);
  }

  // The number `o` as `s` (its bytes appended to `out`).
  void number(const shape& s, nb::handle o, std::vector<uint8_t>& out,
              const std::string& where) const {
    auto put = [&out](const auto& v) {
      auto* b = reinterpret_cast<const uint8_t*>(&v);
      out.insert(out.end(), b, b + sizeof v);
    };
    PyObject* p = o.ptr();
    if (s.kind == 'f') {
      if (!PyFloat_Check(p) && !PyLong_Check(p) &&
          !(Py_TYPE(p)->tp_as_number && Py_TYPE(p)->tp_as_number->nb_float))
        fail(s, o, where);
      double d = PyFloat_AsDouble(p);
      if (d == -1.0 && PyErr_Occurred()) throw nb::python_error();
      if (s.bytes == 4)
        put(static_cast<float>(d));
      else
        put(d);
      return;
    }
    if (!PyIndex_Check(p)) fail(s, o, where);
    nb::object index = nb::steal(PyNumber_Index(p));
    if (!index) throw nb::python_error();
    auto range = [&](const char* limits) {
      PyErr_Format(PyExc_OverflowError, "%s (%s): %R is out of the range of %s",
                   (what + where).c_str(), type.name.c_str(), p, limits);
      throw nb::python_error();
    };
    if (s.kind == 'i') {
      int overflow = 0;
      long long v = PyLong_AsLongLongAndOverflow(index.ptr(), &overflow);
      if (v == -1 && PyErr_Occurred()) throw nb::python_error();
      long long lo = s.bytes >= 8 ? std::numeric_limits<long long>::min()
                                  : -(1LL << (8 * s.bytes - 1));
      long long hi = s.bytes >= 8 ? std::numeric_limits<long long>::max()
                                  : (1LL << (8 * s.bytes - 1)) - 1;
      if (overflow != 0 || v < lo || v > hi)
        range(("a signed " + std::to_string(8 * s.bytes) + "-bit int").c_str());
      auto* b = reinterpret_cast<const uint8_t*>(&v); // little-endian: low bytes first
      out.insert(out.end(), b, b + s.bytes);
    } else {
      unsigned long long v = PyLong_AsUnsignedLongLong(index.ptr());
      bool bad = v == static_cast<unsigned long long>(-1) && PyErr_Occurred();
      if (bad) PyErr_Clear();
      if (bad || (s.bytes < 8 && v >= (1ULL << (8 * s.bytes))))
        range(("an unsigned " + std::to_string(8 * s.bytes) + "-bit int").c_str());
      auto* b = reinterpret_cast<const uint8_t*>(&v);
      out.insert(out.end(), b, b + s.bytes);
    }
  }

  void number_vector(const shape& s, nb::handle o, const std::string& where) const {
    auto& e = s.items[0];
    PyObject* p = o.ptr();
    if (!PyUnicode_Check(p) && !PyList_Check(p) && !PyTuple_Check(p)) {
      auto& v = w.view();
      if (!v.take(o)) fail(s, o, where);
      auto& b = v.view();
      if (b.ndim > 1)
        throw nb::type_error((what + where + " (" + type.name +
                              "): expected a 1-D array, got " + std::to_string(b.ndim) +
                              " dimensions (pass a.ravel())")
                                 .c_str());
      char kind = format_kind(b.format);
      if (kind != e.kind || static_cast<size_t>(b.itemsize) != e.bytes)
        throw nb::type_error((what + where + " (" + type.name + "): expected " +
                              (e.kind == 'f'   ? "float"
                               : e.kind == 'i' ? "int"
                                               : "uint") +
                              std::to_string(8 * e.bytes) + " data, got buffer format '" +
                              (b.format ? b.format : "B") + "' of " +
                              std::to_string(b.itemsize) + " bytes (convert with astype)")
                                 .c_str());
      w.count(static_cast<size_t>(b.len) / e.bytes);
      w.raw(b.buf, static_cast<size_t>(b.len));
      return;
    }
    if (PyUnicode_Check(p)) fail(s, o, where);
    nb::sequence seq = nb::borrow<nb::sequence>(o);
    size_t n = nb::len(seq);
    auto& bytes = w.scratch();
    bytes.reserve(n * e.bytes);
    for (size_t i = 0; i < n; ++i)
      number(e, seq[i], bytes, where + ", element " + std::to_string(i));
    w.count(n);
    w.raw(bytes.data(), bytes.size());
  }

  void encode(const shape& s, nb::handle o, const std::string& where) const {
    PyObject* p = o.ptr();
    switch (s.kind) {
    case '?': {
      if (!PyBool_Check(p) &&
          std::string{Py_TYPE(p)->tp_name}.rfind("numpy.bool", 0) != 0)
        fail(s, o, where);
      uint8_t b = PyObject_IsTrue(p) ? 1 : 0;
      w.raw(&b, 1);
      return;
    }
    case 'i':
    case 'u':
    case 'f': {
      std::vector<uint8_t> bytes;
      number(s, o, bytes, where);
      w.raw(bytes.data(), bytes.size());
      return;
    }
    case 's': {
      const char* data = nullptr;
      Py_ssize_t n = 0;
      if (PyUnicode_Check(p)) {
        data = PyUnicode_AsUTF8AndSize(p, &n);
        if (data == nullptr) throw nb::python_error();
      } else if (PyBytes_Check(p)) {
        data = PyBytes_AS_STRING(p);
        n = PyBytes_GET_SIZE(p);
      } else {
        auto& v = w.view();
        if (!v.take(o) || v.view().itemsize != 1) fail(s, o, where);
        data = static_cast<const char*>(v.view().buf);
        n = v.view().len;
      }
      w.count(static_cast<size_t>(n));
      w.raw(data, static_cast<size_t>(n));
      return;
    }
    case 'v': {
      if (s.number_vector()) return number_vector(s, o, where);
      if (!PyList_Check(p) && !PyTuple_Check(p)) fail(s, o, where);
      nb::sequence seq = nb::borrow<nb::sequence>(o);
      size_t n = nb::len(seq);
      w.count(n);
      for (size_t i = 0; i < n; ++i)
        encode(s.items[0], seq[i], where + ", element " + std::to_string(i));
      return;
    }
    case 'a':
    case 't': {
      if (!PyList_Check(p) && !PyTuple_Check(p)) fail(s, o, where);
      nb::sequence seq = nb::borrow<nb::sequence>(o);
      size_t n = nb::len(seq), want = s.kind == 'a' ? s.count : s.items.size();
      if (n != want) fail(s, o, where + " (of length " + std::to_string(n) + ")");
      for (size_t i = 0; i < n; ++i)
        encode(s.kind == 'a' ? s.items[0] : s.items[i], seq[i],
               where + ", element " + std::to_string(i));
      return;
    }
    case 'm': {
      if (!PyDict_Check(p)) fail(s, o, where);
      nb::dict d = nb::borrow<nb::dict>(o);
      w.count(d.size());
      for (auto [k, v] : d) {
        encode(s.items[0], k, where + ", a key");
        encode(s.items[1], v, where + ", the value of a key");
      }
      return;
    }
    case 'o': {
      uint8_t has = o.is_none() ? 0 : 1;
      w.raw(&has, 1);
      if (has) encode(s.items[0], o, where);
      return;
    }
    case 'd': { // a device buffer: its bytes, staged to a device where it runs
      auto& v = w.view();
      if (PyUnicode_Check(p) || !v.take(o)) fail(s, o, where);
      uint8_t lost = 0;
      w.raw(&lost, 1);
      w.count(static_cast<size_t>(v.view().len));
      w.raw(v.view().buf, static_cast<size_t>(v.view().len));
      return;
    }
    case 'n':
      if (!o.is_none()) fail(s, o, where);
      return;
    default:
      throw nb::type_error((what + where + ": " + type.name +
                            " cannot be made in Python (a user type with its own "
                            "inspect, or an object ref inside a value)")
                               .c_str());
    }
  }
};

} // namespace

const shape& shape_cache::of(const detail::type_descriptor& t) {
  auto i = shapes_.find(&t);
  if (i != shapes_.end()) return i->second;
  try {
    return shapes_.emplace(&t, parse_shape(t.shape)).first->second;
  } catch (const std::invalid_argument& e) {
    throw nb::type_error((t.name + ": " + e.what()).c_str());
  }
}

detail::boxed_value to_value(nb::handle o, const detail::type_descriptor& t,
                             const shape& s, const std::string& what,
                             lent_vectors* lent) {
  if (s.number_vector())
    if (auto v = vector_from_buffer(o, t, s, what, lent)) return {std::move(v), &t};
  layout_writer w;
  encoder{t, what, w}.encode(s, o, "");
  bulk_head h;
  h.head_size = h.skeleton_size = w.skeleton.size();
  for (auto& b : w.blocks)
    h.blocks.push_back(b.second);
  std::vector<std::pair<uint8_t*, size_t>> dests;
  std::string why;
  auto value =
      t.decode_skeleton(w.skeleton.data(), h, dests, why, nullptr, nullptr, nullptr);
  if (!value || dests.size() != w.blocks.size())
    throw nb::type_error((what + " (" + t.name +
                          "): " + (why.empty() ? "its bulk buffers do not match" : why))
                             .c_str());
  {
    nb::gil_scoped_release unlocked;
    for (size_t i = 0; i < dests.size(); ++i)
      std::memcpy(dests[i].first, w.blocks[i].first, dests[i].second);
  }
  return {std::move(value), &t};
}

nb::object lent_vectors::make(const shape& e, size_t n) {
  for (auto i = by_data_.begin(); i != by_data_.end();) // forget those freed
    i = i->second.value.expired() ? by_data_.erase(i) : std::next(i);
  return with_number(e, [&](auto x) -> nb::object {
    using E = decltype(x);
    auto v = std::make_shared<std::vector<E>>();
    {
      nb::gil_scoped_release unlocked;
      v->reserve(n);
      if (n * sizeof(E) >= ready_memory_min) ready_memory(v->data(), n * sizeof(E));
      v->resize(n);
    }
    by_data_[v->data()] = {v, &detail::type_of<std::vector<E>>(), n * sizeof(E)};
    nb::capsule owner(new std::shared_ptr<std::vector<E>>(v), [](void* q) noexcept {
      delete static_cast<std::shared_ptr<std::vector<E>>*>(q);
    });
    return nb::ndarray<nb::numpy, E, nb::ndim<1>>(v->data(), {n}, owner).cast();
  });
}

std::shared_ptr<const void> lent_vectors::find(const void* data, size_t bytes,
                                               const detail::type_descriptor& t) {
  auto i = by_data_.find(data);
  if (i == by_data_.end() || i->second.bytes != bytes ||
      !detail::same_type(*i->second.type, t))
    return nullptr;
  return i->second.value.lock();
}

const detail::type_descriptor& put_type(nb::handle o) {
  using detail::type_of;
  PyObject* p = o.ptr();
  if (PyBool_Check(p)) return type_of<bool>();
  if (PyLong_Check(p)) return type_of<int64_t>();
  if (PyFloat_Check(p)) return type_of<double>();
  if (PyUnicode_Check(p) || PyBytes_Check(p)) return type_of<std::string>();
  auto all = [&](auto check) {
    nb::sequence seq = nb::borrow<nb::sequence>(o);
    for (auto item : seq)
      if (!check(item.ptr())) return false;
    return true;
  };
  if (PyList_Check(p) && PyList_GET_SIZE(p) > 0) {
    if (all([](PyObject* x) { return PyLong_Check(x) && !PyBool_Check(x); }))
      return type_of<std::vector<int64_t>>();
    if (all([](PyObject* x) { return PyFloat_Check(x) || PyLong_Check(x); }))
      return type_of<std::vector<double>>();
    if (all([](PyObject* x) { return PyUnicode_Check(x); }))
      return type_of<std::vector<std::string>>();
  }
  if (PyDict_Check(p) && PyDict_Size(p) > 0) {
    nb::dict d = nb::borrow<nb::dict>(o);
    bool keys = true, ints = true, floats = true, strs = true;
    for (auto [k, v] : d) {
      keys = keys && PyUnicode_Check(k.ptr());
      ints = ints && PyLong_Check(v.ptr()) && !PyBool_Check(v.ptr());
      floats = floats && (PyFloat_Check(v.ptr()) || PyLong_Check(v.ptr()));
      strs = strs && PyUnicode_Check(v.ptr());
    }
    if (keys && ints) return type_of<std::map<std::string, int64_t>>();
    if (keys && floats) return type_of<std::map<std::string, double>>();
    if (keys && strs) return type_of<std::map<std::string, std::string>>();
  }
  buffer_view v;
  if (!PyUnicode_Check(p) && v.take(o) && v.view().ndim == 1) {
    shape e;
    e.kind = format_kind(v.view().format);
    e.bytes = static_cast<size_t>(v.view().itemsize);
    if (e.number()) try {
        return *with_number<const detail::type_descriptor*>(
            e, [](auto x) { return &type_of<std::vector<decltype(x)>>(); });
      } catch (const std::runtime_error&) { // a size no C++ number has
      }
  }
  throw nb::type_error(
      ("put cannot store a " + py_type(o) +
       ": it stores a bool, int, float, str, bytes, a 1-D NumPy array of "
       "numbers, a non-empty list of ints, floats or strs, or a non-empty "
       "dict of str to int, float or str; pass other values to a function "
       "whose parameter gives their type")
          .c_str());
}

} // namespace swarm::python
