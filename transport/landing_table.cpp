#include "transport/landing_table.hpp"

namespace swarm::wire_msg {

void landing_table::await_chunk(const std::string& peer, const object_ref_id& id,
                                uint64_t offset, landing where) {
  std::lock_guard<std::mutex> guard{mtx_};
  expected_[{id.owner, id.seq, offset}] = {peer, std::move(where)};
}

std::optional<landing> landing_table::claim(const std::string& peer,
                                            const object_ref_id& id, uint64_t offset,
                                            uint64_t size) {
  std::lock_guard<std::mutex> guard{mtx_};
  auto i = expected_.find({id.owner, id.seq, offset});
  if (i == expected_.end() || i->second.first != peer || size > i->second.second.size)
    return std::nullopt;
  auto out = std::move(i->second.second);
  expected_.erase(i);
  return out;
}

void landing_table::forget(const object_ref_id& id, uint64_t offset) {
  std::lock_guard<std::mutex> guard{mtx_};
  expected_.erase({id.owner, id.seq, offset});
}

void landing_table::drop(const object_ref_id& id) {
  std::lock_guard<std::mutex> guard{mtx_};
  expected_.erase(expected_.lower_bound({id.owner, id.seq, 0}),
                  expected_.upper_bound({id.owner, id.seq, UINT64_MAX}));
}

size_t landing_table::size() const {
  std::lock_guard<std::mutex> guard{mtx_};
  return expected_.size();
}

} // namespace swarm::wire_msg
