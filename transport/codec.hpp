#pragma once

// Binary encoding of user values. A user type becomes encodable with one declaration,
// an `inspect` overload found by argument-dependent lookup:
//
//   struct point { double x; double y; };
//   template <class Inspector>
//   bool inspect(Inspector& f, point& p) { return f(p.x, p.y); }
//
// Arithmetic types, enums, strings, vectors, arrays, pairs, tuples, maps and optionals
// are encodable out of the box. The encoding is little-endian, sizes are 64-bit.

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <exception>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <type_traits>
#include <unordered_map>
#include <utility>
#include <vector>

namespace swarm {

class binary_writer;
class binary_reader;

namespace detail {

template <class T, class = void> struct has_inspect : std::false_type {};

template <class T>
struct has_inspect<
    T, std::void_t<decltype(inspect(std::declval<binary_writer&>(), std::declval<T&>()))>>
    : std::true_type {};

template <class T> struct is_vector : std::false_type {};
template <class T, class A> struct is_vector<std::vector<T, A>> : std::true_type {};

template <class T> struct is_map : std::false_type {};
template <class K, class V, class C, class A>
struct is_map<std::map<K, V, C, A>> : std::true_type {};
template <class K, class V, class H, class E, class A>
struct is_map<std::unordered_map<K, V, H, E, A>> : std::true_type {};

template <class T> struct is_optional : std::false_type {};
template <class T> struct is_optional<std::optional<T>> : std::true_type {};

template <class T> struct is_tuple_like : std::false_type {};
template <class... Ts> struct is_tuple_like<std::tuple<Ts...>> : std::true_type {};
template <class A, class B> struct is_tuple_like<std::pair<A, B>> : std::true_type {};

template <class T> struct is_array : std::false_type {};
template <class T, size_t N> struct is_array<std::array<T, N>> : std::true_type {};

} // namespace detail

/// True when values of `T` can be encoded to bytes and decoded again.
template <class T> struct is_encodable;

template <class T>
struct is_encodable : std::bool_constant<std::is_arithmetic_v<T> || std::is_enum_v<T> ||
                                         std::is_same_v<T, std::string> ||
                                         detail::has_inspect<T>::value> {};

template <class T, class A> struct is_encodable<std::vector<T, A>> : is_encodable<T> {};
template <class T, size_t N> struct is_encodable<std::array<T, N>> : is_encodable<T> {};
template <class T> struct is_encodable<std::optional<T>> : is_encodable<T> {};
template <class A, class B>
struct is_encodable<std::pair<A, B>>
    : std::bool_constant<is_encodable<A>::value && is_encodable<B>::value> {};
template <class... Ts>
struct is_encodable<std::tuple<Ts...>>
    : std::bool_constant<(is_encodable<Ts>::value && ...)> {};
template <class K, class V, class C, class A>
struct is_encodable<std::map<K, V, C, A>>
    : std::bool_constant<is_encodable<K>::value && is_encodable<V>::value> {};
template <class K, class V, class H, class E, class A>
struct is_encodable<std::unordered_map<K, V, H, E, A>>
    : std::bool_constant<is_encodable<K>::value && is_encodable<V>::value> {};

template <class T> inline constexpr bool is_encodable_v = is_encodable<T>::value;

namespace detail {

template <class T> constexpr size_t min_encoded_size();

template <class T, size_t... Is>
constexpr size_t min_encoded_size_of_elements(std::index_sequence<Is...>) {
  return (size_t{0} + ... + min_encoded_size<std::tuple_element_t<Is, T>>());
}

/// The fewest bytes any value of `T` encodes to, so that a count field can be checked
/// against the bytes left before anything is allocated for it. 0 for a type with an
/// `inspect` overload: what it reads may depend on the values it has read.
template <class T> constexpr size_t min_encoded_size() {
  using U = std::remove_const_t<T>;
  if constexpr (std::is_same_v<U, bool>)
    return 1;
  else if constexpr (std::is_arithmetic_v<U> || std::is_enum_v<U>)
    return sizeof(U);
  else if constexpr (std::is_same_v<U, std::string> || is_vector<U>::value ||
                     is_map<U>::value)
    return sizeof(uint64_t); // the count
  else if constexpr (is_array<U>::value)
    return std::tuple_size_v<U> * min_encoded_size<typename U::value_type>();
  else if constexpr (is_optional<U>::value)
    return 1; // the flag
  else if constexpr (is_tuple_like<U>::value)
    return min_encoded_size_of_elements<U>(
        std::make_index_sequence<std::tuple_size_v<U>>{});
  else
    return 0;
}

} // namespace detail

namespace detail {

/// Appends bytes to a buffer.
class vector_sink {
public:
  explicit vector_sink(std::vector<uint8_t>& out) : out_(out) {}
  void append(const void* p, size_t n) {
    auto* b = static_cast<const uint8_t*>(p);
    out_.insert(out_.end(), b, b + n);
  }

private:
  std::vector<uint8_t>& out_;
};

/// Counts bytes without storing them.
class counting_sink {
public:
  void append(const void*, size_t n) { total_ += n; }
  size_t total() const { return total_; }

private:
  size_t total_ = 0;
};

} // namespace detail

/// Appends the encoding of values to a sink (a byte buffer, or a counter).
template <class Sink> class basic_writer {
public:
  explicit basic_writer(Sink& sink) : sink_(sink) {}

  template <class... Ts> bool operator()(Ts&... xs) {
    (write(xs), ...);
    return true;
  }

private:
  void write_raw(const void* p, size_t n) { sink_.append(p, n); }

  void write_size(size_t n) {
    auto v = static_cast<uint64_t>(n);
    write_raw(&v, sizeof v);
  }

  template <class T> void write(T& x) {
    using U = std::remove_const_t<T>;
    if constexpr (std::is_same_v<U, bool>) {
      uint8_t b = x ? 1 : 0;
      write_raw(&b, 1);
    } else if constexpr (std::is_arithmetic_v<U> || std::is_enum_v<U>) {
      write_raw(&x, sizeof x);
    } else if constexpr (std::is_same_v<U, std::string>) {
      write_size(x.size());
      write_raw(x.data(), x.size());
    } else if constexpr (detail::is_vector<U>::value) {
      write_size(x.size());
      using E = typename U::value_type;
      if constexpr (std::is_arithmetic_v<E> && !std::is_same_v<E, bool>)
        write_raw(x.data(), x.size() * sizeof(E));
      else
        for (auto& e : x)
          write(const_cast<E&>(static_cast<const E&>(e)));
    } else if constexpr (detail::is_array<U>::value) {
      for (auto& e : x)
        write(e);
    } else if constexpr (detail::is_map<U>::value) {
      write_size(x.size());
      for (auto& [k, v] : x) {
        write(const_cast<typename U::key_type&>(k));
        write(v);
      }
    } else if constexpr (detail::is_optional<U>::value) {
      bool has = x.has_value();
      write(has);
      if (has) write(*x);
    } else if constexpr (detail::is_tuple_like<U>::value) {
      std::apply([this](auto&... es) { (this->write(es), ...); }, x);
    } else {
      static_assert(detail::has_inspect<U>::value,
                    "type is not encodable: declare `template <class Inspector> bool "
                    "inspect(Inspector& f, T& x) { return f(x.a, x.b); }`");
      inspect(*this, const_cast<U&>(x));
    }
  }

  Sink& sink_;
};

/// Writes the encoding of values into a byte buffer.
class binary_writer : public basic_writer<detail::vector_sink> {
public:
  explicit binary_writer(std::vector<uint8_t>& out)
      : basic_writer(sink_storage_), sink_storage_(out) {}

private:
  detail::vector_sink sink_storage_;
};

/// Decodes values from a byte range; every read is bounds-checked.
class binary_reader {
public:
  binary_reader(const uint8_t* data, size_t size) : pos_(data), end_(data + size) {}

  template <class... Ts> bool operator()(Ts&... xs) { return (read(xs) && ...); }

  /// Whether every byte was consumed.
  bool at_end() const { return pos_ == end_; }

  /// What went wrong, or an empty string.
  const std::string& failure() const { return failure_; }

private:
  bool fail(const char* what) {
    if (failure_.empty()) failure_ = what;
    return false;
  }

  size_t remaining() const { return static_cast<size_t>(end_ - pos_); }

  bool read_raw(void* p, size_t n) {
    if (remaining() < n) return fail("truncated input");
    // An empty vector's data() may be null, which memcpy must not be given.
    if (n == 0) return true;
    std::memcpy(p, pos_, n);
    pos_ += n;
    return true;
  }

  // A count of elements of type `E`. A count larger than the remaining bytes could hold
  // is corrupt input, not a reason to allocate. Elements that may encode to nothing are
  // still held to one byte each, so a count never runs a loop longer than the input.
  template <class E> bool read_count(size_t& n) {
    uint64_t v = 0;
    if (!read_raw(&v, sizeof v)) return false;
    constexpr size_t min_size = std::max<size_t>(detail::min_encoded_size<E>(), 1);
    if (v > remaining() / min_size) return fail("size field exceeds remaining input");
    n = static_cast<size_t>(v);
    return true;
  }

  // Room for `n` decoded elements of `E`, but no more memory than the bytes left in the
  // input: an element may take more room in memory than on the wire.
  template <class V> void reserve_for(V& x, size_t n) {
    x.reserve(std::min(n, remaining() / sizeof(typename V::value_type)));
  }

  template <class T> bool read(T& x) {
    if constexpr (std::is_same_v<T, bool>) {
      uint8_t b = 0;
      if (!read_raw(&b, 1)) return false;
      if (b > 1) return fail("invalid bool");
      x = b == 1;
      return true;
    } else if constexpr (std::is_arithmetic_v<T> || std::is_enum_v<T>) {
      return read_raw(&x, sizeof x);
    } else if constexpr (std::is_same_v<T, std::string>) {
      size_t n = 0;
      if (!read_count<char>(n)) return false;
      x.assign(reinterpret_cast<const char*>(pos_), n);
      pos_ += n;
      return true;
    } else if constexpr (detail::is_vector<T>::value) {
      using E = typename T::value_type;
      size_t n = 0;
      if (!read_count<E>(n)) return false;
      if constexpr (std::is_arithmetic_v<E> && !std::is_same_v<E, bool>) {
        x.resize(n);
        return read_raw(x.data(), n * sizeof(E));
      } else {
        x.clear();
        reserve_for(x, n);
        for (size_t i = 0; i < n; ++i) {
          E e{};
          if (!read(e)) return false;
          x.push_back(std::move(e));
        }
        return true;
      }
    } else if constexpr (detail::is_array<T>::value) {
      for (auto& e : x)
        if (!read(e)) return false;
      return true;
    } else if constexpr (detail::is_map<T>::value) {
      using K = typename T::key_type;
      using V = typename T::mapped_type;
      size_t n = 0;
      if (!read_count<std::pair<K, V>>(n)) return false;
      x.clear();
      for (size_t i = 0; i < n; ++i) {
        K k{};
        V v{};
        if (!read(k) || !read(v)) return false;
        // Keeping one of two values for a key would decode something never encoded.
        if (!x.emplace(std::move(k), std::move(v)).second)
          return fail("duplicate map key");
      }
      return true;
    } else if constexpr (detail::is_optional<T>::value) {
      bool has = false;
      if (!read(has)) return false;
      if (!has) {
        x.reset();
        return true;
      }
      typename T::value_type v{};
      if (!read(v)) return false;
      x = std::move(v);
      return true;
    } else if constexpr (detail::is_tuple_like<T>::value) {
      return std::apply([this](auto&... es) { return (this->read(es) && ...); }, x);
    } else {
      static_assert(detail::has_inspect<T>::value,
                    "type is not decodable: declare inspect");
      return inspect(*this, x);
    }
  }

  const uint8_t* pos_;
  const uint8_t* end_;
  std::string failure_;
};

/// Encodes `x` into a fresh buffer.
template <class T> std::vector<uint8_t> encode(const T& x) {
  std::vector<uint8_t> out;
  detail::vector_sink sink{out};
  basic_writer<detail::vector_sink> w{sink};
  w(const_cast<T&>(x));
  return out;
}

/// The number of bytes `encode(x)` would produce, computed without encoding.
template <class T> size_t encoded_size(const T& x) {
  detail::counting_sink sink;
  basic_writer<detail::counting_sink> w{sink};
  w(const_cast<T&>(x));
  return sink.total();
}

/// Decodes a `T` from `data`; returns false (and leaves a reason in `why`) on malformed
/// input or trailing bytes. An exception while decoding (memory running out, a user
/// type's `inspect` throwing) does not escape: it is a reason too.
template <class T> bool decode(const uint8_t* data, size_t size, T& x, std::string& why) {
  try {
    binary_reader r{data, size};
    if (!r(x)) {
      why = r.failure().empty() ? "inspect rejected the input" : r.failure();
      return false;
    }
    if (!r.at_end()) {
      why = "trailing bytes after value";
      return false;
    }
    return true;
  } catch (const std::exception& e) {
    why = std::string{"decoding threw: "} + e.what();
  } catch (...) {
    why = "decoding threw an exception";
  }
  return false;
}

} // namespace swarm
