#include "framework/object_ref.hpp"

#include "framework/detail/core.hpp"

namespace swarm::detail {

void write_ref(codec_context* ctx, const slot_ptr& slot) {
  if (auto* node = dynamic_cast<ref_lender*>(ctx)) node->lend(slot);
}

result<slot_ptr> read_ref(codec_context* ctx, const object_id& id,
                          const type_descriptor& type) {
  auto* node = dynamic_cast<core*>(ctx);
  if (!node)
    return error{errc::invalid_argument, "a ref of object " + id.to_string() +
                                             " was read outside a node: only a node "
                                             "reads refs"};
  return node->borrow(id, type);
}

} // namespace swarm::detail
