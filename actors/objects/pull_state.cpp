#include "actors/objects/pull_state.hpp"

#include <algorithm>
#include <cstring>
#include <iterator>
#include <optional>

namespace swarm::actors {

uint64_t pull_state::available(uint64_t offset) const {
  if (!serving) return 0;
  auto i = have.upper_bound(offset);
  if (i == have.begin()) return 0;
  --i;
  return i->second > offset ? i->second - offset : 0;
}

bool pull_state::coming_whole(uint64_t offset) const {
  auto i = asked.upper_bound(offset);
  if (i == asked.begin()) return false;
  --i;
  return i->second.whole && offset < i->first + i->second.length;
}

void pull_state::place(uint64_t offset, const uint8_t* data, uint64_t n) {
  place_blocks(head_size, dests, offset, data, n);
}

void pull_state::arrived(uint64_t offset, uint64_t n) const {
  detail::for_each_block_part(
      head_size, dests, landed, offset, offset + n,
      [](const detail::block_landed& f, uint64_t lo, uint64_t len) {
        f(lo, len);
        return true;
      });
}

void pull_state::mark(uint64_t offset, uint64_t n) {
  auto lo = offset, hi = offset + n;
  auto i = have.upper_bound(lo);
  if (i != have.begin() && std::prev(i)->second >= lo) {
    --i;
    lo = i->first;
    hi = std::max(hi, i->second);
    i = have.erase(i);
  }
  while (i != have.end() && i->first <= hi) {
    hi = std::max(hi, i->second);
    i = have.erase(i);
  }
  have[lo] = hi;
}

std::shared_ptr<served_layout> lay_out(std::shared_ptr<const void> v,
                                       const detail::type_descriptor* type,
                                       codec_context* ctx) {
  auto s = std::make_shared<served_layout>();
  s->type = type;
  if (type) {
    s->layout = type->lay_out(v.get(), ctx);
  } else {
    auto& bytes = *static_cast<const std::vector<uint8_t>*>(v.get());
    s->layout.blocks = {{bytes.data(), bytes.size()}};
  }
  s->value = std::move(v);
  return s;
}

void place_blocks(uint64_t head_size,
                  const std::vector<std::pair<uint8_t*, size_t>>& dests, uint64_t offset,
                  const uint8_t* data, uint64_t n) {
  uint64_t start = head_size;
  for (auto& [dest, size] : dests) {
    auto lo = std::max(offset, start), hi = std::min(offset + n, start + size);
    if (lo < hi) std::memcpy(dest + (lo - start), data + (lo - offset), hi - lo);
    start += size;
  }
}

std::pair<const uint8_t*, uint64_t> piece_at(const bulk_layout& l, uint64_t offset,
                                             uint64_t n) {
  uint64_t start = 0;
  auto in = [&](const uint8_t* data,
                uint64_t size) -> std::optional<std::pair<const uint8_t*, uint64_t>> {
    if (offset < start || offset >= start + size) return std::nullopt;
    return std::pair{data + (offset - start), std::min(n, start + size - offset)};
  };
  if (auto p = in(l.head.data(), l.head.size())) return *p;
  start = l.head.size();
  for (auto& [data, size] : l.blocks) {
    if (auto p = in(data, size)) return *p;
    start += size;
  }
  return {nullptr, 0};
}

} // namespace swarm::actors
