#pragma once

#include <cstddef>

#include "framework/detail/object_slot.hpp"
#include "transport/codec.hpp"

namespace swarm::detail {

/// A node writing values that may hold object refs: each ref written is lent, so that
/// the node reading the value can find the object (see `core::borrow`).
class ref_lender : public codec_context {
public:
  /// `slot` is being written into a value that may leave this node.
  virtual void lend(const slot_ptr& slot) = 0;
};

/// The writer's context while encoding one value: counts the refs written, lending
/// each through `node` (when it is a lender).
class ref_counter final : public ref_lender {
public:
  explicit ref_counter(codec_context* node) : node_(dynamic_cast<ref_lender*>(node)) {}

  void lend(const slot_ptr& slot) override {
    ++count_;
    if (node_) node_->lend(slot);
  }

  /// Refs written so far.
  size_t count() const noexcept { return count_; }

private:
  ref_lender* node_;
  size_t count_ = 0;
};

} // namespace swarm::detail
