#pragma once

#include <utility>
#include <variant>

#include "base/error.hpp"

namespace swarm {

/// Either a value or the `error` that prevented it.
template <class T> class result {
public:
  result(T value) : data_(std::in_place_index<0>, std::move(value)) {}
  result(error err) : data_(std::in_place_index<1>, std::move(err)) {}

  bool has_value() const noexcept { return data_.index() == 0; }
  explicit operator bool() const noexcept { return has_value(); }

  /// The value; throws `failure` when this holds an error.
  T& value() & {
    check();
    return std::get<0>(data_);
  }
  const T& value() const& {
    check();
    return std::get<0>(data_);
  }
  /// By value from a temporary, so `for (auto& x : f().value())` is safe.
  T value() && {
    check();
    return std::get<0>(std::move(data_));
  }

  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

  /// The error; only valid when `!has_value()`.
  const swarm::error& err() const { return std::get<1>(data_); }

private:
  void check() const {
    if (data_.index() != 0) throw failure{std::get<1>(data_)};
  }

  std::variant<T, swarm::error> data_;
};

/// A result without a value.
template <> class result<void> {
public:
  result() = default;
  result(error err) : err_(std::move(err)), ok_(false) {}

  bool has_value() const noexcept { return ok_; }
  explicit operator bool() const noexcept { return ok_; }
  void value() const {
    if (!ok_) throw failure{err_};
  }
  const swarm::error& err() const { return err_; }

private:
  swarm::error err_;
  bool ok_ = true;
};

} // namespace swarm
