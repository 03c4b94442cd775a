#include "actors/control_store/gcs_chain.hpp"

#include <algorithm>

namespace swarm::actors {

void gcs_chain_link::set(std::string self, send_fn send) {
  auto w = std::make_shared<const wiring>(wiring{std::move(self), std::move(send)});
  std::atomic_store(&wiring_, std::move(w));
}

std::string gcs_chain_link::self() const {
  return std::atomic_load(&wiring_)->self;
}

void gcs_chain_link::send(const std::string& to, wire_msg::gcs_chain m) const {
  auto w = std::atomic_load(&wiring_);
  if (w->send) w->send(to, std::move(m));
}

void gcs_chain_link::set_placement(wire_msg::kv_placement p) {
  std::atomic_store(&placement_,
                    std::shared_ptr<const wire_msg::kv_placement>{
                        std::make_shared<wire_msg::kv_placement>(std::move(p))});
}

std::shared_ptr<const wire_msg::kv_placement> gcs_chain_link::placement() const {
  return std::atomic_load(&placement_);
}

std::vector<uint8_t> encode_records(const std::vector<gcs_record>& recs) {
  std::vector<uint8_t> out;
  for (auto& r : recs) {
    auto framed = encode_record(r);
    out.insert(out.end(), framed.begin(), framed.end());
  }
  return out;
}

std::vector<gcs_record> records_of(const row_tables& tables) {
  std::vector<gcs_record> out;
  for (auto& [table, rows] : tables)
    for (auto& [key, row] : rows)
      out.push_back({table, key, row});
  return out;
}

result<std::vector<gcs_record>> decode_records(const std::vector<uint8_t>& bytes) {
  std::vector<gcs_record> out;
  for (size_t at = 0;;) {
    auto f = next_frame(bytes.data(), bytes.size(), at);
    if (f.what == frame_at::kind::end) return out;
    if (f.what != frame_at::kind::record)
      return error{errc::invalid_argument,
                   "chain record at byte " + std::to_string(at) + ": " + f.why};
    auto rec = decode_record(f.payload, f.size);
    if (!rec)
      return error{errc::invalid_argument, "chain record at byte " + std::to_string(at) +
                                               ": " + rec.err().message};
    out.push_back(std::move(*rec));
    at = f.next;
  }
}

std::string successor(const std::vector<std::string>& members, const std::string& self) {
  auto i = std::find(members.begin(), members.end(), self);
  if (i == members.end() || i + 1 == members.end()) return {};
  return *(i + 1);
}

} // namespace swarm::actors
