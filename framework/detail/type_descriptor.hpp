#pragma once

#include <array>
#include <cstddef>
#include <exception>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <typeinfo>
#include <unordered_map>
#include <vector>

#include "transport/codec.hpp"

namespace swarm {
template <class T> class object_ref;
} // namespace swarm

namespace swarm::detail {

class value_pool;
struct type_descriptor;

// `value_pool::take` and `adopt`, for the decoders below (value_pool.hpp includes this).
// `take_from` takes only values as large as the pool keeps.
void* take_from(value_pool& pool, const type_descriptor& type, size_t bytes);
std::shared_ptr<void> adopt_into(value_pool& pool, void* value,
                                 const type_descriptor& type);

/// Returns the readable name of a mangled type name.
std::string demangle(const char* mangled);

/// What the runtime knows about a value type without knowing the type statically.
struct type_descriptor {
  const std::type_info* info;
  std::string name;
  /// Bytes the value occupies, for store accounting.
  size_t (*byte_size)(const void* value);
  /// Appends the value's encoding (what crosses nodes), written by the node `ctx` (may
  /// be null: the object refs in it are then not lent, see `ref_lender`).
  void (*encode)(const void* value, std::vector<uint8_t>& out, codec_context* ctx);
  /// Decodes a value, read by the node `ctx` (may be null); nullptr with the reason in
  /// `why` on malformed input.
  std::shared_ptr<const void> (*decode)(const uint8_t* data, size_t size,
                                        std::string& why, codec_context* ctx);
  /// Lays the value out for bulk transfer: its large buffers are sent from where they
  /// are (see `bulk_layout`).
  bulk_layout (*lay_out)(const void* value, codec_context* ctx);
  /// Makes a value from a bulk layout's complete head (`data`, read as `h`): its small
  /// parts decoded, `dests` the places its blocks' bytes go (written before anyone else
  /// sees the value); nullptr with the reason in `why` on malformed input. A plain
  /// buffer (a string, a vector of numbers) is made in memory `pool` kept, if any, and
  /// goes back there when freed. With `landed`, what is to run as parts of its blocks
  /// arrive goes there (see `swarm::decode_skeleton`).
  std::shared_ptr<void> (*decode_skeleton)(
      const uint8_t* data, const bulk_head& h,
      std::vector<std::pair<uint8_t*, size_t>>& dests, std::string& why, value_pool* pool,
      codec_context* ctx, std::vector<std::pair<size_t, detail::block_landed>>* landed);
  /// Deletes a value made with `new`.
  void (*destroy)(void* value);
  /// How the value is encoded, for drivers in other languages (see `shape_of`).
  std::string shape;
};

/// Whether two descriptors describe the same type.
inline bool same_type(const type_descriptor& a, const type_descriptor& b) {
  return a.info == b.info || *a.info == *b.info;
}

/// Stands in for `void` results.
struct unit {};

template <class Inspector> bool inspect(Inspector&, unit&) {
  return true;
}

/// What a future of `R` holds: `U` for a future (`object_ref<U>`: a function returning
/// one is done when it is), `R` otherwise.
template <class R> struct future_value { using type = R; };
template <class U> struct future_value<object_ref<U>> { using type = U; };
template <class R> using future_value_t = typename future_value<std::decay_t<R>>::type;

/// The stored form of a result: `unit` for void, `U` for a future of `U`.
template <class R>
using stored_t =
    std::conditional_t<std::is_void_v<future_value_t<R>>, unit, future_value_t<R>>;

template <class T> size_t byte_size_of(const void* p) {
  auto& x = *static_cast<const T*>(p);
  if constexpr (std::is_arithmetic_v<T> || std::is_enum_v<T> || std::is_empty_v<T>)
    return sizeof(T);
  else
    return sizeof(T) + encoded_size(x);
}

template <class T>
void encode_into(const void* p, std::vector<uint8_t>& out, codec_context* ctx) {
  detail::vector_sink sink{out};
  basic_writer<detail::vector_sink> w{sink, ctx};
  w(*const_cast<T*>(static_cast<const T*>(p)));
}

// A default value to decode into; nullptr (the reason in `why`) when making it threw.
// Decoding runs where a bad message must not throw (a node's I/O thread): decode itself
// does not, and making the value is caught the same way.
template <class T> std::shared_ptr<T> make_to_decode(std::string& why) {
  static_assert(std::is_default_constructible_v<T>,
                "values that cross nodes must be default-constructible to be decoded");
  try {
    return std::make_shared<T>();
  } catch (const std::exception& e) {
    why = std::string{"cannot make the value: "} + e.what();
  } catch (...) {
    why = "cannot make the value: its constructor threw";
  }
  return nullptr;
}

template <class T>
std::shared_ptr<const void> decode_from(const uint8_t* data, size_t size,
                                        std::string& why, codec_context* ctx) {
  auto x = make_to_decode<T>(why);
  if (!x || !swarm::decode(data, size, *x, why, ctx)) return nullptr;
  return x;
}

template <class T> bulk_layout lay_out_of(const void* p, codec_context* ctx) {
  return swarm::lay_out(*static_cast<const T*>(p), ctx);
}

// Whether decoding into a used value of `T` leaves nothing of what it held: true for
// plain buffers, not for user types (a member their `inspect` skips would stay).
template <class T> struct decodes_whole : std::is_same<T, std::string> {};
template <class E, class A>
struct decodes_whole<std::vector<E, A>>
    : std::bool_constant<std::is_arithmetic_v<E> && !std::is_same_v<E, bool>> {};

template <class T> const type_descriptor& type_of();

template <class T>
std::shared_ptr<void>
decode_skeleton_of(const uint8_t* data, const bulk_head& h,
                   std::vector<std::pair<uint8_t*, size_t>>& dests, std::string& why,
                   value_pool* pool, codec_context* ctx,
                   std::vector<std::pair<size_t, block_landed>>* landed) {
  std::shared_ptr<T> x;
  if constexpr (decodes_whole<T>::value) {
    if (pool) try {
        size_t bytes = 0;
        for (auto b : h.blocks)
          bytes += b;
        auto* kept = take_from(*pool, type_of<T>(), bytes);
        x = std::static_pointer_cast<T>(
            adopt_into(*pool, kept ? kept : new T{}, type_of<T>()));
      } catch (...) { // out of memory: try as without a pool
      }
  }
  if (!x) x = make_to_decode<T>(why);
  if (!x || !swarm::decode_skeleton(data, h, *x, dests, why, ctx, landed)) return nullptr;
  return x;
}

template <class T> struct shape_trait;

/// The shape of `T`'s encoding, written so that a driver in another language can encode
/// and decode values of it without the C++ type: `?` bool, `i1`..`i8` and `u1`..`u8`
/// integers of that many bytes, `f4` `f8` floating point, `s` string, `v<E>` vector,
/// `a<N;E>` array of N, `m<K,V>` map, `o<T>` optional, `t<A,B,...>` tuple or pair,
/// `r<T>` object ref, `d` device buffer, `n` nothing (a void result), `x` a user type
/// (opaque).
template <class T> std::string shape_of() {
  return shape_trait<std::remove_cv_t<T>>::get();
}

template <class T> struct shape_trait {
  static std::string get() {
    if constexpr (std::is_same_v<T, bool>)
      return "?";
    else if constexpr (std::is_enum_v<T>)
      return shape_of<std::underlying_type_t<T>>();
    else if constexpr (std::is_integral_v<T>)
      return (std::is_signed_v<T> ? "i" : "u") + std::to_string(sizeof(T));
    else if constexpr (std::is_floating_point_v<T>)
      return sizeof(T) == 4 || sizeof(T) == 8 ? "f" + std::to_string(sizeof(T)) : "x";
    else if constexpr (std::is_same_v<T, std::string>)
      return "s";
    else
      return "x";
  }
};
template <> struct shape_trait<unit> {
  static std::string get() { return "n"; }
};
template <class E, class A> struct shape_trait<std::vector<E, A>> {
  static std::string get() { return "v<" + shape_of<E>() + ">"; }
};
template <class E, size_t N> struct shape_trait<std::array<E, N>> {
  static std::string get() {
    return "a<" + std::to_string(N) + ";" + shape_of<E>() + ">";
  }
};
template <class E> struct shape_trait<std::optional<E>> {
  static std::string get() { return "o<" + shape_of<E>() + ">"; }
};
template <class K, class V, class C, class A> struct shape_trait<std::map<K, V, C, A>> {
  static std::string get() { return "m<" + shape_of<K>() + "," + shape_of<V>() + ">"; }
};
template <class K, class V, class H, class E, class A>
struct shape_trait<std::unordered_map<K, V, H, E, A>> {
  static std::string get() { return "m<" + shape_of<K>() + "," + shape_of<V>() + ">"; }
};
template <class A, class B> struct shape_trait<std::pair<A, B>> {
  static std::string get() { return "t<" + shape_of<A>() + "," + shape_of<B>() + ">"; }
};
template <class... Ts> struct shape_trait<std::tuple<Ts...>> {
  static std::string get() {
    std::string out = "t<";
    ((out += shape_of<Ts>() + ","), ...);
    if (out.back() == ',') out.pop_back();
    return out + ">";
  }
};
template <class T> struct shape_trait<object_ref<T>> {
  static std::string get() { return "r<" + shape_of<stored_t<T>>() + ">"; }
};

template <class T> void destroy_of(void* p) {
  delete static_cast<T*>(p);
}

/// The descriptor of `T`: one immutable object per type, like `typeid`.
template <class T> const type_descriptor& type_of() {
  static_assert(is_encodable_v<T>,
                "Swarm arguments and results must be encodable so they can cross nodes: "
                "declare `template <class Inspector> bool inspect(Inspector& f, T& x)`");
  static const type_descriptor instance{&typeid(T),
                                        demangle(typeid(T).name()),
                                        &byte_size_of<T>,
                                        &encode_into<T>,
                                        &decode_from<T>,
                                        &lay_out_of<T>,
                                        &decode_skeleton_of<T>,
                                        &destroy_of<T>,
                                        shape_of<T>()};
  return instance;
}

/// An immutable value of a type known only at run time; copies share the value.
struct boxed_value {
  std::shared_ptr<const void> ptr;
  const type_descriptor* type = nullptr;

  template <class T> static boxed_value make(T&& x) {
    using U = std::decay_t<T>;
    return {std::make_shared<const U>(std::forward<T>(x)), &type_of<U>()};
  }
};

} // namespace swarm::detail
