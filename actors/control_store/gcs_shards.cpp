#include "actors/control_store/gcs_shards.hpp"

#include <caf/all.hpp>

#include <algorithm>
#include <future>

#include "actors/control_store/gcs_shard.hpp"
#include "actors/control_store/protocol.hpp"
#include "framework/detail/wire_convert.hpp"

namespace swarm::actors {

namespace {

constexpr auto request_timeout = std::chrono::seconds(10);

using kv_reply = gcs_shards::kv_reply;
using kv_done = std::function<void(kv_reply)>;

// The chain of `shard` in `p`, its serving node first; empty while unplaced.
std::vector<std::string> chain_of(const wire_msg::kv_placement& p, size_t shard) {
  for (auto& c : p.chains)
    if (c.shard == shard && !c.members.empty()) return c.members;
  return {};
}

std::string reason_of(const caf::error& e) {
  return e ? caf::to_string(e) : "no reply";
}

// A one-shot actor that waits for the shard's answer, so no thread blocks on the chain.
// (Its state comes as spawn arguments: CAF 0.17 binds a null tuple for a function actor
// spawned without any.)
void kv_once(caf::event_based_actor* self, caf::actor shard, detail::kv_op op,
             std::string key, std::vector<uint8_t> value, kv_done done) {
  auto fail = [done, key](const caf::error& e) {
    done(error{errc::timeout, "control store, key '" + key + "': " + reason_of(e)});
  };
  switch (op) {
  case detail::kv_op::get:
    self->request(shard, request_timeout, scan_atom::value, std::string{"kv"}, key)
        .then(
            [done](std::vector<table_row>& rows) {
              if (rows.empty()) return done(kv_reply{std::nullopt});
              done(kv_reply{std::move(std::get<wire_msg::kv_entry>(rows.front()).value)});
            },
            fail);
    break;
  case detail::kv_op::put:
    self->request(shard, request_timeout, put_atom::value, std::string{"kv"}, key,
                  table_row{wire_msg::kv_entry{key, std::move(value)}})
        .then([done] { done(kv_reply{std::nullopt}); }, fail);
    break;
  case detail::kv_op::erase:
    self->request(shard, request_timeout, erase_atom::value, std::string{"kv"}, key)
        .then([done] { done(kv_reply{std::nullopt}); }, fail);
    break;
  }
}

} // namespace

gcs_shards::gcs_shards(caf::actor_system& sys, size_t count, bool spread_kv)
    : sys_(sys), count_(count), spread_kv_(spread_kv),
      shards_(spread_kv ? 2 * count : count), kv_joined_(count, 0) {}

caf::actor gcs_shards::for_key(const std::string& key) const {
  std::lock_guard<std::mutex> guard{mtx_};
  return shards_.empty() ? nullptr : shards_[shard_of(key, count_)];
}

void gcs_shards::set(size_t index, caf::actor a) {
  std::lock_guard<std::mutex> guard{mtx_};
  if (index >= shards_.size()) return;
  shards_[index] = std::move(a);
  if (!shards_[index]) return;
  if (index < count_) {
    if (chain_.size() > 1) caf::anon_send(shards_[index], chain_atom::value, chain_);
    return;
  }
  // A key-value shard restarted: it heads its chain again when the placement says so.
  auto chain = chain_of(kv_placement_, index - count_);
  if (!chain.empty() && chain.front() == chain_link_->self())
    caf::anon_send(shards_[index], chain_atom::value, std::move(chain),
                   kv_placement_.version, kv_joined_[index - count_]);
}

void gcs_shards::clear() {
  std::lock_guard<std::mutex> guard{mtx_};
  shards_.clear();
}

std::vector<caf::actor> gcs_shards::first(size_t n) const {
  std::lock_guard<std::mutex> guard{mtx_};
  return {shards_.begin(),
          shards_.begin() + static_cast<std::ptrdiff_t>(std::min(n, shards_.size()))};
}

void gcs_shards::set_chain(std::vector<std::string> members) {
  std::lock_guard<std::mutex> guard{mtx_};
  chain_ = std::move(members);
  for (size_t i = 0; i < count_ && i < shards_.size(); ++i)
    if (shards_[i]) caf::anon_send(shards_[i], chain_atom::value, chain_);
}

void gcs_shards::set_kv_placement(const wire_msg::kv_placement& p) {
  {
    std::lock_guard<std::mutex> guard{mtx_};
    if (p.version <= kv_placement_.version) return;
    auto self = chain_link_->self();
    for (auto& c : p.chains) {
      auto index = count_ + c.shard;
      if (c.shard >= count_) continue;
      auto before = chain_of(kv_placement_, c.shard);
      // Since when this node is a member without a break, as the head says (it knows
      // what this node may have missed: a placement that dropped it while it was cut
      // off, say); without its word, since now.
      auto& joined = kv_joined_[c.shard];
      auto joined_before = joined;
      auto at = static_cast<size_t>(std::find(c.members.begin(), c.members.end(), self) -
                                    c.members.begin());
      joined = at == c.members.size() ? 0 : at < c.since.size() ? c.since[at] : p.version;
      // Every shard here whose chain changed hears of it: a head heads the new chain
      // (or steps down), and a member (or one no longer a member) takes no write of a
      // configuration before it, from a head that has not heard yet. So does one placed
      // in the same chain again, having missed the placements that dropped it.
      if (index < shards_.size() && shards_[index] &&
          (before != c.members || joined != joined_before))
        caf::anon_send(shards_[index], chain_atom::value, c.members, p.version, joined);
    }
    kv_placement_ = p;
    chain_link_->set_placement(p);
  }
  placed_.notify_all();
}

wire_msg::kv_placement gcs_shards::kv_placement() const {
  std::lock_guard<std::mutex> guard{mtx_};
  return kv_placement_;
}

uint64_t gcs_shards::kv_placement_version() const {
  std::lock_guard<std::mutex> guard{mtx_};
  return kv_placement_.version;
}

std::optional<std::string> gcs_shards::kv_node(const std::string& key) const {
  std::lock_guard<std::mutex> guard{mtx_};
  if (kv_placement_.version == 0) return std::nullopt;
  auto chain = chain_of(kv_placement_, shard_of(table_key("kv", key), count_));
  return chain.empty() ? std::string{} : chain.front();
}

bool gcs_shards::await_kv_placement(uint64_t version, std::chrono::milliseconds timeout) {
  std::unique_lock<std::mutex> guard{mtx_};
  return placed_.wait_for(guard, timeout,
                          [&] { return kv_placement_.version > version; });
}

result<caf::actor> gcs_shards::kv_shard(const std::string& key) const {
  auto shard = shard_of(table_key("kv", key), count_);
  std::lock_guard<std::mutex> guard{mtx_};
  if (kv_placement_.version == 0) {
    // Spread, the table's rows are on the nodes its placement names: the head's own
    // shards hold none of them (started again, it knows none), so nothing is served
    // until it placed the table (once the nodes of its file joined).
    if (spread_kv_)
      return error{errc::runtime_stopped,
                   "the key-value table is spread over several nodes (gcs_hosts) and "
                   "not placed yet: the head places it once the nodes of its cluster "
                   "file joined, or node_timeout_ms after it started"};
    if (shards_.empty() || !shards_[shard])
      return error{errc::runtime_stopped,
                   "the control-store shard for key '" + key + "' is restarting"};
    return shards_[shard];
  }
  auto self = chain_link_->self();
  auto chain = chain_of(kv_placement_, shard);
  auto serving = chain.empty() ? std::string{} : chain.front();
  if (serving != self || count_ + shard >= shards_.size())
    return error{
        errc::runtime_stopped,
        "node '" + self + "' does not serve key '" + key +
            "' of the key-value table (shard " + std::to_string(shard) + "): " +
            (serving.empty() ? "no node does yet" : "node '" + serving + "' does")};
  if (!shards_[count_ + shard])
    return error{errc::runtime_stopped,
                 "the key-value shard for key '" + key + "' is restarting"};
  return shards_[count_ + shard];
}

bool gcs_shards::chain_message(wire_msg::gcs_chain m) {
  caf::actor shard;
  {
    std::lock_guard<std::mutex> guard{mtx_};
    if (m.shard >= shards_.size()) return false;
    shard = shards_[m.shard];
  }
  // A shard being restarted misses this; its chain resyncs it on the next write.
  if (shard) caf::anon_send(shard, chain_atom::value, std::move(m));
  return true;
}

void gcs_shards::put(const std::string& table, const std::string& key, table_row row) {
  if (auto shard = for_key(table_key(table, key)))
    caf::anon_send(shard, put_atom::value, table, key, std::move(row));
}

void gcs_shards::erase(const std::string& table, const std::string& key) {
  if (auto shard = for_key(table_key(table, key)))
    caf::anon_send(shard, erase_atom::value, table, key);
}

result<std::vector<table_row>> gcs_shards::scan(const std::string& table) {
  caf::scoped_actor self{sys_};
  std::vector<table_row> out;
  result<void> ok;
  for (auto& shard : first(count_)) {
    if (!shard)
      return error{errc::runtime_stopped, "a control-store shard is restarting"};
    self->request(shard, request_timeout, scan_atom::value, table)
        .receive(
            [&](std::vector<table_row>& rows) {
              out.insert(out.end(), std::make_move_iterator(rows.begin()),
                         std::make_move_iterator(rows.end()));
            },
            [&](caf::error& e) {
              ok = error{errc::timeout,
                         "control-store table '" + table + "': " + reason_of(e)};
            });
    if (!ok) return ok.err();
  }
  return out;
}

result<bool> gcs_shards::register_name(const std::string& name,
                                       detail::actor_record_ptr rec) {
  caf::scoped_actor self{sys_};
  result<bool> out{false};
  self->request(for_key(name), request_timeout, register_atom::value, name,
                std::move(rec))
      .receive([&](bool ok) { out = ok; },
               [&](caf::error& e) {
                 out = error{errc::invalid_argument, "could not register actor name '" +
                                                         name + "': " + reason_of(e)};
               });
  return out;
}

void gcs_shards::kv_async(detail::kv_op op, const std::string& key,
                          std::vector<uint8_t> value, kv_done done) {
  auto shard = kv_shard(key);
  if (!shard) {
    done(shard.err());
    return;
  }
  sys_.spawn(kv_once, *shard, op, key, std::move(value), std::move(done));
}

kv_reply gcs_shards::kv(detail::kv_op op, const std::string& key,
                        std::vector<uint8_t> value) {
  auto p = std::make_shared<std::promise<kv_reply>>();
  auto f = p->get_future();
  kv_async(op, key, std::move(value), [p](kv_reply r) { p->set_value(std::move(r)); });
  return f.get();
}

void gcs_shards::add_stats(size_t& named_actors, size_t& rows) {
  caf::scoped_actor self{sys_};
  for (auto& shard : first(local_count()))
    if (shard)
      self->request(shard, request_timeout, stats_atom::value)
          .receive(
              [&](size_t, size_t named, size_t n) {
                named_actors += named;
                rows += n;
              },
              [](caf::error&) {});
}

wire_msg::kv_reply to_wire(uint64_t request_id, gcs_shards::kv_reply r) {
  wire_msg::kv_reply out;
  out.request_id = request_id;
  if (!r) {
    out.failed = true;
    out.error = detail::to_wire(r.err());
  } else if (*r) {
    out.found = true;
    out.value = std::move(**r);
  }
  return out;
}

gcs_shards::kv_reply from_wire(wire_msg::kv_reply r) {
  if (r.failed) return detail::from_wire(r.error);
  if (!r.found) return std::optional<std::vector<uint8_t>>{};
  return std::optional<std::vector<uint8_t>>{std::move(r.value)};
}

} // namespace swarm::actors
