#pragma once

// The object manager on the test coordinator, and what it sent: shared by its tests.

#include <doctest/doctest.h>

#include "framework/detail/value_pool.hpp"

#include <caf/all.hpp>
#include <caf/test/dsl.hpp>

#include <algorithm>
#include <cstring>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "actors/objects/object_manager.hpp"
#include "framework/detail/wire_convert.hpp"

namespace swarm::object_manager_test {

using namespace actors;

using bytes_t = std::vector<uint8_t>;

// What the manager sent and published, outliving the actor system.
struct manager_parts {
  std::vector<std::pair<std::string, wire_msg::message>> sent;
  std::vector<wire_msg::object_location> rows;
  std::map<std::string, double> loads; // how busy each node is, 0 unless set
  std::vector<std::string> warnings;   // the node's log's warning lines
};

// `v` laid out as a holder sends it.
inline std::shared_ptr<const swarm::bulk_layout> layout_of(const detail::boxed_value& v) {
  return std::make_shared<const swarm::bulk_layout>(
      v.type->lay_out(v.ptr.get(), nullptr));
}

// The bytes a puller receives for `v`: its layout's head, then its blocks.
inline bytes_t laid_out(const detail::boxed_value& v) {
  auto l = layout_of(v);
  bytes_t out = l->head;
  for (auto& [data, size] : l->blocks)
    out.insert(out.end(), data, data + size);
  return out;
}

// An object owned on node index 2 ("w1").
inline object_key owned_by_w1(uint64_t seq) {
  return {(uint64_t{2} << owner_index_shift) | 1, seq};
}

// Steps the manager on the test coordinator.
struct fixture : manager_parts, test_coordinator_fixture<> {
  object_manager_actor m;

  explicit fixture(uint64_t chunk_bytes = 4, uint64_t keep_bytes = 256 << 20,
                   detail::value_pool* pool = nullptr,
                   std::shared_ptr<wire_msg::landing_table> landings = nullptr) {
    object_manager_config oc;
    oc.node = "head";
    oc.nodes = {"head", "w1", "w2"};
    oc.send = [this](const std::string& to, wire_msg::message msg) {
      sent.emplace_back(to, std::move(msg));
    };
    oc.publish = [this](wire_msg::object_location r) { rows.push_back(std::move(r)); };
    oc.load = [this](const std::string& n) { return loads[n]; };
    oc.warn = [this](const std::string& line) { warnings.push_back(line); };
    oc.pick = [this](size_t n, const std::set<std::string>& exclude) {
      std::vector<std::pair<double, std::string>> free;
      for (auto& name : {"w1", "w2"})
        if (!exclude.count(name)) free.emplace_back(loads[name], name);
      std::sort(free.begin(), free.end());
      std::vector<std::string> out;
      for (size_t i = 0; i < free.size() && i < n; ++i)
        out.push_back(free[i].second);
      return out;
    };
    oc.chunk_bytes = chunk_bytes;
    oc.keep_pulled_bytes = keep_bytes;
    oc.pull_window = 2;
    oc.pool = pool;
    oc.landings = std::move(landings);
    m = spawn_object_manager(sys, std::move(oc), false);
  }

  ~fixture() override {
    if (m) caf::anon_send_exit(m, caf::exit_reason::user_shutdown);
    sched.run();
  }

  template <class... Ts> void tell(Ts&&... xs) {
    caf::anon_send(m, std::forward<Ts>(xs)...);
    sched.run();
  }

  // The pulls sent so far to `node`, in order.
  std::vector<wire_msg::object_pull> pulls_to(const std::string& node) const {
    std::vector<wire_msg::object_pull> out;
    for (auto& [to, msg] : sent)
      if (to == node)
        if (auto* p = std::get_if<wire_msg::object_pull>(&msg)) out.push_back(*p);
    return out;
  }

  // Answers the pull `p` from `encoded`, as the holder `from` would.
  void answer(const wire_msg::object_pull& p, const bytes_t& encoded,
              const std::string& from = "w1") {
    wire_msg::object_chunk c;
    c.id = p.id;
    c.offset = p.offset;
    c.total = encoded.size();
    c.data.assign(encoded.begin() + static_cast<ptrdiff_t>(p.offset),
                  encoded.begin() + static_cast<ptrdiff_t>(p.offset + p.length));
    tell(chunk_atom::value, from, std::move(c));
  }

  // Answers every pull sent to `node` once each, those it causes too; `answered` counts
  // the ones answered so far.
  void serve_pulls(const std::string& node, const bytes_t& encoded, size_t& answered) {
    for (auto all = pulls_to(node); answered < all.size(); all = pulls_to(node))
      answer(all[answered++], encoded, node);
  }

  // Reads `ref` as a std::string, a pull of `weight`; what the manager hands back.
  std::shared_ptr<std::optional<swarm::result<detail::boxed_value>>>
  read(const wire_msg::remote_ref& ref, double weight = 1) {
    auto out = std::make_shared<std::optional<swarm::result<detail::boxed_value>>>();
    tell(fetch_atom::value, fetch_request{ref, &detail::type_of<std::string>(),
                                          [out](swarm::result<detail::boxed_value> v) {
                                            *out = std::move(v);
                                          },
                                          weight});
    return out;
  }

  uint64_t kept_bytes() {
    uint64_t n = 0;
    self->send(m, kept_atom::value);
    sched.run();
    self->receive([&](uint64_t x) { n = x; },
                  caf::after(std::chrono::seconds(0)) >> [] {});
    return n;
  }

  uint64_t remembered() {
    uint64_t n = 0;
    self->send(m, count_atom::value);
    sched.run();
    self->receive([&](uint64_t x) { n = x; },
                  caf::after(std::chrono::seconds(0)) >> [] {});
    return n;
  }
};

inline std::string as_string(const detail::boxed_value& v) {
  return *static_cast<const std::string*>(v.ptr.get());
}

// Chunks of 64 KiB.
struct bulk_fixture : fixture {
  bulk_fixture() : fixture(64 << 10) {}
};

// Answers the pulls sent to w1 and w2 until `got` is in (bounded); `a1` and `a2` count
// those answered so far.
template <class Got>
void serve_both(fixture& f, const Got& got, const bytes_t& encoded, size_t& a1,
                size_t& a2) {
  for (int round = 0; round < 100 && !*got; ++round) {
    f.serve_pulls("w1", encoded, a1);
    f.serve_pulls("w2", encoded, a2);
  }
}

} // namespace swarm::object_manager_test
