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
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <type_traits>
#include <unordered_map>
#include <utility>
#include <vector>

#include "base/ready_memory.hpp"

namespace swarm {

class binary_writer;
class binary_reader;

/// What a node lends the encoder and decoder of its values, for `inspect` overloads of
/// types that name something of a node (an actor handle, an object ref): `f.context()`
/// while writing or reading.
class codec_context {
public:
  virtual ~codec_context() = default;
};

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

/// Reads the bytes [offset, offset + length) of a block into where it points, before
/// they are sent; false, with why, when they cannot be.
using block_fill =
    std::function<bool(uint64_t offset, uint64_t length, std::string& why)>;

/// Runs once the bytes [offset, offset + length) of a block being received are where it
/// points (see `binary_reader::when_landed`).
using block_landed = std::function<void(uint64_t offset, uint64_t length)>;

/// Runs `f(entry's second, offset, length)` for each of `entries` (pairs of a block's
/// index, in order, and what to run) whose block overlaps the bytes [offset, end) of a
/// layout with a `head`-byte head and `blocks`, the overlap counted from the block's
/// start; false as soon as `f` is.
template <class Blocks, class Entries, class F>
bool for_each_block_part(uint64_t head, const Blocks& blocks, const Entries& entries,
                         uint64_t offset, uint64_t end, F&& f) {
  uint64_t start = head;
  size_t block = 0;
  for (auto& [index, what] : entries) {
    for (; block < index && block < blocks.size(); ++block)
      start += blocks[block].second;
    if (block >= blocks.size()) break;
    auto size = blocks[block].second;
    auto lo = std::max(offset, start);
    auto hi = std::min(end, start + size);
    if (lo < hi && !f(what, lo - start, hi - lo)) return false;
  }
  return true;
}

/// Copies small writes into a skeleton and keeps large ones (`bulk_block_min` bytes or
/// more: the buffers of strings and vectors of numbers) as views of the value's memory.
class segment_sink {
public:
  void append(const void* p, size_t n);
  std::vector<uint8_t> skeleton;
  std::vector<std::pair<const uint8_t*, size_t>> blocks;
  /// Blocks whose bytes are read in only when first sent (see `bulk_layout::fill`).
  std::vector<std::pair<size_t, block_fill>> fills;
};

} // namespace detail

/// Writes of this many bytes or more are bulk blocks: sent from and received into the
/// value's own memory.
inline constexpr size_t bulk_block_min = 64 << 10;

/// A value's encoding laid out for bulk transfer without copying its large buffers: a
/// head (u64 skeleton size, u64 block count, u64 size of each block, then the skeleton:
/// every small write in order), then the blocks, which point into the value (keep it
/// alive and unchanged while the layout is used).
struct bulk_layout {
  std::vector<uint8_t> head;
  std::vector<std::pair<const uint8_t*, size_t>> blocks;
  /// Read in the blocks that are not yet where they point (a device buffer's bytes, read
  /// from the device into host memory as they are first sent, not when the value is
  /// laid out), each with its block's index.
  std::vector<std::pair<size_t, detail::block_fill>> fills;

  /// Reads in what `fills` cover of the layout's bytes [offset, offset + length): true
  /// once they are there, false with why when they cannot be. A chunk sent reads only
  /// its own bytes, so a device's copy of the next overlaps the network's of this one.
  bool fill(uint64_t offset, uint64_t length, std::string& why) const {
    auto end = length > UINT64_MAX - offset ? UINT64_MAX : offset + length;
    return detail::for_each_block_part(head.size(), blocks, fills, offset, end,
                                       [&](const detail::block_fill& f, uint64_t lo,
                                           uint64_t n) { return f(lo, n, why); });
  }

  /// Reads in all of the layout's bytes (see above).
  bool fill(std::string& why) const { return fill(0, UINT64_MAX, why); }

  /// Bytes of the whole layout: head and blocks.
  uint64_t size() const {
    uint64_t n = head.size();
    for (auto& b : blocks)
      n += b.second;
    return n;
  }
};

/// Where a bulk layout's head ends and what it says, once its first bytes are known.
struct bulk_head {
  uint64_t head_size = 0;
  uint64_t skeleton_size = 0;
  std::vector<uint64_t> blocks;
};

namespace detail {
inline void segment_sink::append(const void* p, size_t n) {
  auto* b = static_cast<const uint8_t*>(p);
  if (n >= bulk_block_min)
    blocks.emplace_back(b, n);
  else
    skeleton.insert(skeleton.end(), b, b + n);
}
} // namespace detail

/// Appends the encoding of values to a sink (a byte buffer, or a counter).
template <class Sink> class basic_writer {
public:
  explicit basic_writer(Sink& sink, codec_context* ctx = nullptr)
      : sink_(sink), context_(ctx) {}

  template <class... Ts> bool operator()(Ts&... xs) {
    (write(xs), ...);
    return true;
  }

  /// The node writing, when one lent itself (may be null).
  codec_context* context() const noexcept { return context_; }

  /// Where the bytes go: an `inspect` that knows its encoding's size may count it
  /// without making it (see `device_buffer`).
  Sink& sink() noexcept { return sink_; }

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
  codec_context* context_;
};

/// Writes the encoding of values into a byte buffer.
class binary_writer : public basic_writer<detail::vector_sink> {
public:
  explicit binary_writer(std::vector<uint8_t>& out, codec_context* ctx = nullptr)
      : basic_writer(sink_storage_, ctx), sink_storage_(out) {}

private:
  detail::vector_sink sink_storage_;
};

/// Decodes values from a byte range; every read is bounds-checked.
class binary_reader {
public:
  binary_reader(const uint8_t* data, size_t size, codec_context* ctx = nullptr)
      : pos_(data), end_(data + size), context_(ctx) {}

  /// Reads a bulk layout's skeleton: a read of a block's size (`bulk_block_min` or more)
  /// does not copy, it records where the block's bytes go in `dests`, in order. With
  /// `landed`, what `when_landed` asks to run as a block's bytes come goes there, each
  /// with its block's index.
  binary_reader(const uint8_t* skeleton, size_t size, const std::vector<uint64_t>& blocks,
                std::vector<std::pair<uint8_t*, size_t>>& dests,
                codec_context* ctx = nullptr,
                std::vector<std::pair<size_t, detail::block_landed>>* landed = nullptr)
      : pos_(skeleton), end_(skeleton + size), context_(ctx), blocks_(&blocks),
        dests_(&dests), landed_(landed) {
    for (auto b : blocks)
      block_bytes_ += b;
  }

  /// Whether the bytes just read are a block that arrives later, whose arrival its
  /// receiver reports (`when_landed` may be called).
  bool lands_later() const noexcept { return landed_ && last_was_block_; }
  /// Runs `f` as parts of the block just read arrive (see `lands_later`).
  void when_landed(detail::block_landed f) {
    landed_->emplace_back(dests_->size() - 1, std::move(f));
  }

  template <class... Ts> bool operator()(Ts&... xs) { return (read(xs) && ...); }

  /// Whether every byte was consumed.
  bool at_end() const {
    return pos_ == end_ && (!blocks_ || next_block_ == blocks_->size());
  }

  /// What went wrong, or an empty string.
  const std::string& failure() const { return failure_; }

  /// The node reading, if one lent itself; null otherwise.
  codec_context* context() const noexcept { return context_; }

  /// Fails the read, saying why (the first reason given stays); for `inspect` overloads.
  bool fail(std::string what) {
    if (failure_.empty()) failure_ = std::move(what);
    return false;
  }

  /// Reads `n` bytes into memory of the caller's, `into(n)` (a `uint8_t*`), asked for
  /// only once the input is known to hold them; in a bulk layout's skeleton, `n` bytes
  /// or more are a block, received there later. For `inspect` overloads that keep bytes
  /// in memory of their own (as a vector of bytes is encoded, less its size).
  template <class Into> bool read_bytes(uint64_t n, Into&& into) {
    if (n > remaining()) return fail("size field exceeds remaining input");
    uint8_t* p = into(static_cast<size_t>(n));
    if (!p && n > 0) return fail("no memory for " + std::to_string(n) + " bytes");
    return read_raw(p, static_cast<size_t>(n));
  }

private:
  size_t remaining() const { return static_cast<size_t>(end_ - pos_) + block_bytes_; }

  bool read_raw(void* p, size_t n) {
    last_was_block_ = blocks_ && n >= bulk_block_min;
    if (last_was_block_) {
      if (next_block_ >= blocks_->size() || (*blocks_)[next_block_] != n)
        return fail("a bulk block does not match the value's layout");
      dests_->emplace_back(static_cast<uint8_t*>(p), n);
      block_bytes_ -= n;
      ++next_block_;
      return true;
    }
    if (static_cast<size_t>(end_ - pos_) < n) return fail("truncated input");
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

  // Sizes `x` to `n` elements. A fresh buffer that will be a bulk block, filled by a pull
  // chunk by chunk, is faulted in in one go first rather than page by page.
  template <class V> void size_to(V& x, size_t n) {
    if (blocks_ && n * sizeof(typename V::value_type) >= bulk_block_min &&
        x.capacity() < n) {
      x.reserve(n);
      ready_memory(x.data(), n * sizeof(typename V::value_type));
    }
    x.resize(n);
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
      if (blocks_ && n >= bulk_block_min) {
        size_to(x, n);
        return read_raw(x.data(), n);
      }
      x.assign(reinterpret_cast<const char*>(pos_), n);
      pos_ += n;
      return true;
    } else if constexpr (detail::is_vector<T>::value) {
      using E = typename T::value_type;
      size_t n = 0;
      if (!read_count<E>(n)) return false;
      if constexpr (std::is_arithmetic_v<E> && !std::is_same_v<E, bool>) {
        size_to(x, n);
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
  codec_context* context_ = nullptr;
  std::string failure_;
  // Reading a bulk layout's skeleton: the sizes of its blocks, where they go.
  const std::vector<uint64_t>* blocks_ = nullptr;
  std::vector<std::pair<uint8_t*, size_t>>* dests_ = nullptr;
  std::vector<std::pair<size_t, detail::block_landed>>* landed_ = nullptr;
  bool last_was_block_ = false;
  size_t next_block_ = 0;
  size_t block_bytes_ = 0;
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

namespace detail {

// Reads all of `x` with `r`, made by `make_reader` (constructing the reader may throw
// too); false with a reason in `why` on malformed input or bytes left over. No exception
// escapes.
template <class T, class MakeReader>
bool read_whole(MakeReader make_reader, T& x, const char* leftover, std::string& why) {
  try {
    binary_reader r = make_reader();
    if (!r(x)) {
      why = r.failure().empty() ? "inspect rejected the input" : r.failure();
      return false;
    }
    if (!r.at_end()) {
      why = leftover;
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

} // namespace detail

/// Decodes a `T` from `data`; returns false (and leaves a reason in `why`) on malformed
/// input or trailing bytes. An exception while decoding (memory running out, a user
/// type's `inspect` throwing) does not escape: it is a reason too.
/// `ctx`, if given, is the node reading (see `codec_context`).
template <class T>
bool decode(const uint8_t* data, size_t size, T& x, std::string& why,
            codec_context* ctx = nullptr) {
  return detail::read_whole(
      [&] {
        return binary_reader{data, size, ctx};
      },
      x, "trailing bytes after value", why);
}

/// Lays `x` out for bulk transfer (see `bulk_layout`), written by the node `ctx` (may be
/// null).
template <class T> bulk_layout lay_out(const T& x, codec_context* ctx = nullptr) {
  detail::segment_sink sink;
  basic_writer<detail::segment_sink> w{sink, ctx};
  w(const_cast<T&>(x));
  bulk_layout out;
  out.head.reserve(16 + 8 * sink.blocks.size() + sink.skeleton.size());
  auto put = [&out](uint64_t v) {
    auto* b = reinterpret_cast<const uint8_t*>(&v);
    out.head.insert(out.head.end(), b, b + sizeof v);
  };
  put(sink.skeleton.size());
  put(sink.blocks.size());
  for (auto& b : sink.blocks)
    put(b.second);
  out.head.insert(out.head.end(), sink.skeleton.begin(), sink.skeleton.end());
  out.blocks = std::move(sink.blocks);
  out.fills = std::move(sink.fills);
  return out;
}

enum class bulk_head_state { incomplete, ready, malformed };

/// Reads the head of a `total`-byte bulk layout from its first `size` bytes: incomplete
/// while they are too few (`out.head_size` says how many once the first 16 are known),
/// malformed (the reason in `why`) when no such layout has this head.
inline bulk_head_state read_bulk_head(const uint8_t* data, size_t size, uint64_t total,
                                      bulk_head& out, std::string& why) {
  auto get = [data](size_t i) {
    uint64_t v = 0;
    std::memcpy(&v, data + 8 * i, sizeof v);
    return v;
  };
  if (size < 16) return bulk_head_state::incomplete;
  auto skeleton = get(0), count = get(1);
  if (count > total / 8 || skeleton > total) {
    why = "bulk layout head: counts exceed the object's size";
    return bulk_head_state::malformed;
  }
  out.skeleton_size = skeleton;
  out.head_size = 16 + 8 * count + skeleton;
  if (out.head_size > total) {
    why = "bulk layout head: longer than the object";
    return bulk_head_state::malformed;
  }
  if (size < out.head_size) return bulk_head_state::incomplete;
  out.blocks.clear();
  uint64_t sum = out.head_size;
  for (size_t i = 0; i < count; ++i) {
    out.blocks.push_back(get(2 + i));
    if (out.blocks.back() < bulk_block_min || out.blocks.back() > total - sum) {
      why = "bulk layout head: a block size does not fit the object";
      return bulk_head_state::malformed;
    }
    sum += out.blocks.back();
  }
  if (sum != total) {
    why = "bulk layout head: blocks and head do not add up to the object's size";
    return bulk_head_state::malformed;
  }
  return bulk_head_state::ready;
}

/// Decodes `x` from a bulk layout's complete head `h` read from `data`: its small parts
/// are read, and `dests` gets where each block's bytes go, in order (inside `x`, whose
/// buffers are sized already). False, with a reason in `why`, on malformed input. With
/// `landed`, it gets what is to run as parts of a block arrive, with the block's index
/// (its receiver runs them: see `binary_reader::when_landed`).
template <class T>
bool decode_skeleton(
    const uint8_t* data, const bulk_head& h, T& x,
    std::vector<std::pair<uint8_t*, size_t>>& dests, std::string& why,
    codec_context* ctx = nullptr,
    std::vector<std::pair<size_t, detail::block_landed>>* landed = nullptr) {
  auto skeleton = data + (h.head_size - h.skeleton_size);
  return detail::read_whole(
      [&] {
        return binary_reader{
            skeleton, static_cast<size_t>(h.skeleton_size), h.blocks, dests, ctx, landed};
      },
      x, "bytes or blocks left over after the value", why);
}

} // namespace swarm
