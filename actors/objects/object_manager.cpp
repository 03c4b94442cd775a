#include "actors/objects/object_manager.hpp"

#include <caf/all.hpp>

#include <algorithm>
#include <deque>
#include <map>
#include <optional>
#include <set>
#include <tuple>

#include "actors/objects/hand_over_table.hpp"
#include "actors/objects/pull_state.hpp"
#include "actors/objects/pulled_copies.hpp"
#include "actors/objects/replication_table.hpp"
#include "framework/detail/task_spec.hpp"

namespace swarm::actors {

namespace {

using value_cb = std::function<void(result<detail::boxed_value>)>;

// Other readers a holder names to a puller, and sources a pull asks at once, at most.
constexpr size_t max_hinted = 8;
constexpr size_t max_striped = 4;

struct held_object {
  detail::boxed_value value;
  std::shared_ptr<const bulk_layout> layout;
  size_t exports = 0; // tasks on other nodes that may still pull it; 0: owned result
  std::shared_ptr<const void> keep;
  bool replicated = false; // kept for its replicas until this node's store lets go
};

struct object_manager_state {
  object_manager_config cfg;
  std::unique_ptr<replication_table> replicas; // made with `cfg`
  std::map<object_key, held_object> held;
  std::map<object_key, pull_state> pulls;
  std::unique_ptr<pulled_copies> copies_here; // made with `cfg`
  std::map<object_key, located_object> located;
  // Nodes sent chunks of an object held here, which may keep copies of it: told to drop
  // them when this node's store lets go of it.
  std::map<object_key, std::set<std::string>> copies;
  std::deque<transfer_event> transfers; // the last pulls that ended, oldest first
  hand_over_table hand_over;
  // This node stops: answered once every owner took what it held for them.
  std::optional<caf::typed_response_promise<uint64_t>> handing;

  std::string id_of(const object_key& k) const {
    return object_id{k.first, k.second}.to_string();
  }

  // Why object `k`, held on the dead node `holder`, cannot be read.
  error lost_error(const object_key& k, const std::string& holder,
                   const std::string& why) const {
    auto owner = owner_node_of(k, cfg.nodes, cfg.joined);
    if (owner == holder)
      return {errc::owner_died, "object " + id_of(k) + "'s owner, node '" + owner +
                                    "', died with its value: " + why};
    return {errc::object_lost,
            "node '" + holder + "', which held object " + id_of(k) + ", died: " + why};
  }

  void hold(hold_request& r) {
    if (!r.exported) {
      held[r.key] = {std::move(r.value), std::move(r.layout), 0, std::move(r.keep)};
      return;
    }
    auto& h = held[r.key];
    if (!h.layout) h = {std::move(r.value), std::move(r.layout), 0, std::move(r.keep)};
    ++h.exports;
  }

  void release(const std::vector<object_key>& keys) {
    for (auto& k : keys) {
      auto i = held.find(k);
      if (i != held.end() && i->second.exports > 0 && --i->second.exports == 0 &&
          !i->second.replicated)
        held.erase(i);
    }
  }

  // A pulled copy of `k` still alive here, laid out to be served; null when none is.
  std::shared_ptr<served_layout> copy_layout(const object_key& k) const {
    auto c = copies_here->kept(k);
    if (!c.value) c = copies_here->remembered(k);
    if (!c.value) return nullptr;
    return lay_out(std::move(c.value), c.type, cfg.values);
  }

  // Sends `peer` what it asked for of an object: from a value held here, a pulled copy
  // alive here, or the part of a pull running here that came in; a pull here that has
  // not got those bytes yet keeps the ask until they come when they were asked of a
  // whole copy, and otherwise sends the reader elsewhere. The chunk at offset 0 names the
  // other nodes this one sent parts of the object to, which the reader may ask as well.
  void serve(const std::string& peer, const wire_msg::object_pull& m) {
    object_key k{m.id.owner, m.id.seq};
    wire_msg::object_chunk c;
    c.id = m.id;
    c.offset = m.offset;
    std::shared_ptr<const void> keep;
    const bulk_layout* l = nullptr;
    uint64_t length = m.length;
    if (auto i = held.find(k); i != held.end()) {
      keep = i->second.layout;
      l = i->second.layout.get();
    } else if (auto s = copy_layout(k)) {
      l = &s->layout;
      keep = std::move(s);
    } else if (auto pi = pulls.find(k); pi != pulls.end()) {
      auto& p = pi->second;
      length = std::min(length, p.available(m.offset));
      if (length == 0) {
        if (p.coming_whole(m.offset)) {
          p.parked.emplace_back(peer, m);
          return;
        }
        c.missing = "node '" + cfg.node + "' is still getting these bytes of " + id_of(k);
        c.not_yet = true;
        return cfg.send(peer, std::move(c));
      }
      l = &p.serving->layout;
      keep = p.serving;
    }
    if (!l) {
      c.missing = "node '" + cfg.node + "' holds no object " + id_of(k) +
                  " (freed, or never here)";
    } else if (m.offset > l->size()) {
      c.missing = "offset " + std::to_string(m.offset) + " is past the object's end";
    } else {
      // A chunk ends where the head or a block ends, so that it is always sent from
      // the value's own memory (the puller asks again for the rest).
      c.total = l->size();
      std::tie(c.source_data, c.source_length) = piece_at(*l, m.offset, length);
      if (c.source_data) c.source = std::shared_ptr<const void>{keep, l};
      auto& to = copies[k];
      if (m.offset == 0)
        for (auto& n : to)
          if (n != peer && c.holders.size() < max_hinted) c.holders.push_back(n);
      to.insert(peer);
    }
    cfg.send(peer, std::move(c));
  }

  // Serves the asks kept for bytes of `p` that came since.
  void serve_parked(pull_state& p) {
    auto parked = std::move(p.parked);
    p.parked.clear();
    for (auto& [peer, m] : parked)
      if (p.available(m.offset) > 0)
        serve(peer, m);
      else
        p.parked.emplace_back(peer, m);
  }

  void ask(const object_key& k, pull_state& p, uint64_t offset, uint64_t len,
           const pull_source& from) {
    cfg.send(from.node, wire_msg::object_pull{{k.first, k.second}, offset, len});
    p.asked[offset] = {len, from.node, from.whole};
    await_landing(k, p, offset, len, from.node);
  }

  // Asks again for the chunk at `offset`, which `failed` could not send, of a source
  // with the whole object; false when none is left.
  bool ask_again(const object_key& k, pull_state& p, uint64_t offset, uint64_t len,
                 const std::string& failed) {
    for (auto& s : p.sources)
      if (s.whole && s.node != failed) {
        ask(k, p, offset, len, s);
        return true;
      }
    return false;
  }

  // Stops asking `node` for parts of `p`; what it was asked for is asked of another
  // source. False when no source with the whole object is left for it.
  bool drop_source(const object_key& k, pull_state& p, const std::string& node) {
    auto gone = std::remove_if(p.sources.begin(), p.sources.end(),
                               [&](const pull_source& s) { return s.node == node; });
    if (gone == p.sources.end()) return true;
    p.sources.erase(gone, p.sources.end());
    std::vector<std::pair<uint64_t, uint64_t>> again;
    for (auto& [offset, a] : p.asked)
      if (a.from == node) again.emplace_back(offset, a.length);
    for (auto& [offset, len] : again)
      if (!ask_again(k, p, offset, len, node)) return false;
    return !p.sources.empty();
  }

  // Once the value is made: the chunk asked of `from` at `offset` is received into the
  // block it starts in (a holder cuts it where that block ends).
  void await_landing(const object_key& k, pull_state& p, uint64_t offset, uint64_t len,
                     const std::string& from) {
    if (!cfg.landings || !p.value) return;
    uint64_t start = p.head_size;
    for (auto& [dest, size] : p.dests) {
      if (offset >= start && offset < start + size) {
        auto n = std::min(len, start + size - offset);
        if (n >= wire_msg::shared_chunk_min)
          cfg.landings->await_chunk(from, {k.first, k.second}, offset,
                                    {dest + (offset - start), n, p.value});
        return;
      }
      start += size;
    }
  }

  // Asks for the next chunks, each of the next source in turn, up to `pull_window` per
  // source (four sources at most) in flight.
  void request_chunks(const object_key& k, pull_state& p) {
    auto window = cfg.pull_window * std::min<size_t>(p.sources.size(), max_striped);
    while (p.in_flight < window && p.next_offset < p.total) {
      auto len = std::min(cfg.chunk_bytes, p.total - p.next_offset);
      auto& from = p.sources[p.turn++ % std::min(p.sources.size(), max_striped)];
      ask(k, p, p.next_offset, len, from);
      p.next_offset += len;
      ++p.in_flight;
    }
  }

  // Counts a pull of `bytes` against the store, dropping kept copies to make room.
  result<std::unique_ptr<detail::store_lease>> reserve(const object_key& k,
                                                       uint64_t bytes) {
    if (!cfg.reserve) return std::unique_ptr<detail::store_lease>{};
    auto r = cfg.reserve(k, bytes);
    while (!r && r.err().code == errc::store_full && copies_here->drop_least_recent())
      r = cfg.reserve(k, bytes);
    if (!r)
      return error{r.err().code, "node '" + cfg.node + "' cannot pull " + id_of(k) +
                                     ": " + r.err().message};
    return r;
  }

  // Where to pull `ref` from: the node named first and the other holders, less loaded
  // first (the named one on a tie), this node never.
  std::vector<pull_source> sources_of(const wire_msg::remote_ref& ref) const {
    std::vector<pull_source> out;
    auto add = [&](const std::string& n) {
      if (n == cfg.node) return;
      for (auto& s : out)
        if (s.node == n) return;
      out.push_back({n, true});
    };
    add(ref.node);
    for (auto& h : ref.holders)
      add(h);
    if (out.empty()) out.push_back({ref.node, true});
    if (cfg.load)
      std::stable_sort(out.begin(), out.end(), [&](auto& a, auto& b) {
        return cfg.load(a.node) < cfg.load(b.node);
      });
    return out;
  }

  // `v` as a `type`: itself, or made from its bytes when it is a replica's (`v.type`
  // null); the copy made is counted against the store and kept for other readers here
  // while it lives.
  result<detail::boxed_value> as_type(const object_key& k, const detail::boxed_value& v,
                                      const detail::type_descriptor* type) {
    if (!type) return v;
    if (!v.type) {
      // Made once while a reader holds it.
      if (auto f = copies_here->remembered(k); f.value && f.type == type)
        return detail::boxed_value{f.value, type};
      auto& bytes = *static_cast<const std::vector<uint8_t>*>(v.ptr.get());
      auto lease = reserve(k, bytes.size());
      if (!lease) return lease.err();
      bulk_head h;
      std::string why;
      std::vector<std::pair<uint8_t*, size_t>> dests;
      std::shared_ptr<void> made;
      if (read_bulk_head(bytes.data(), bytes.size(), bytes.size(), h, why) ==
          bulk_head_state::ready)
        made = type->decode_skeleton(bytes.data(), h, dests, why, cfg.pool, cfg.values);
      uint64_t at = h.head_size;
      for (auto& d : dests)
        at += d.second;
      if (made && at == bytes.size())
        place_blocks(h.head_size, dests, 0, bytes.data(), at);
      if (!made || at != bytes.size())
        return error{errc::type_mismatch, "the replica of " + id_of(k) + " on node '" +
                                              cfg.node + "' is not a " + type->name +
                                              (why.empty() ? "" : ": " + why)};
      auto counted = with_lease(std::move(made), std::move(*lease));
      copies_here->remember(k, counted, type);
      return detail::boxed_value{std::move(counted), type};
    }
    if (!detail::same_type(*v.type, *type))
      return error{errc::type_mismatch,
                   "expected a " + type->name + ", got a " + v.type->name};
    return v;
  }

  // `v`, counted against the store by `lease` while anyone holds it (the lease lives in
  // its control block).
  static std::shared_ptr<const void>
  with_lease(std::shared_ptr<const void> v, std::unique_ptr<detail::store_lease> lease) {
    if (!lease) return v;
    auto counted = std::make_shared<
        std::pair<std::shared_ptr<const void>, std::unique_ptr<detail::store_lease>>>(
        v, std::move(lease));
    return std::shared_ptr<const void>{counted, v.get()};
  }

  // Reads `r.ref` as `r.type`, or as its layout's bytes when `r.type` is null (to keep a
  // replica: no value is made).
  void fetch(fetch_request& r) {
    object_key k{r.ref.id.owner, r.ref.id.seq};
    if (auto h = held.find(k); h != held.end()) {
      if (cfg.count_lookup && r.type && !h->second.value.type) cfg.count_lookup(true);
      return r.done(as_type(k, h->second.value, r.type));
    }
    auto hit = [&](std::shared_ptr<const void> p, const detail::type_descriptor* type) {
      if (cfg.count_lookup && r.type) cfg.count_lookup(true);
      r.done(detail::boxed_value{std::move(p), type});
    };
    if (auto c = copies_here->remembered(k); c.value && (!r.type || c.type == r.type))
      return hit(std::move(c.value), c.type);
    if (auto c = copies_here->kept(k); c.value && !r.type)
      return hit(std::move(c.value), c.type);
    if (auto p = r.type ? copies_here->read_kept(k, r.type) : nullptr)
      return hit(std::move(p), r.type);
    if (cfg.count_lookup && r.type) cfg.count_lookup(false);
    if (auto i = pulls.find(k); i != pulls.end()) {
      i->second.waiters.emplace_back(r.type, std::move(r.done));
      return;
    }
    auto lease = reserve(k, r.ref.size);
    if (!lease) return r.done(lease.err());
    auto& p = pulls[k];
    p.lease = std::move(*lease);
    p.sources = sources_of(r.ref);
    p.started_us = detail::now_us();
    p.type = r.type;
    p.total = r.ref.size;
    p.waiters.emplace_back(r.type, std::move(r.done));
    if (!p.type) {
      // A replica: the layout's bytes, received in place from the start.
      auto bytes = std::make_shared<std::vector<uint8_t>>(p.total);
      p.dests = {{bytes->data(), bytes->size()}};
      p.value = bytes;
      p.serving = lay_out(bytes, nullptr, nullptr);
    }
    request_chunks(k, p);
  }

  // Holds `r.hold` here, and asks other nodes to keep replicas of it.
  void replicate(replicate_request& r) {
    auto k = r.hold.key;
    hold(r.hold);
    auto& h = held[k];
    h.replicated = true;
    replicas->start(k, h.layout->size(), r.copies, std::move(r.done), std::move(r.avoid));
  }

  // Freed here: the replicas kept from here, and the copies of the readers this node
  // sent parts of it to, go too.
  void drop_copies(const object_key& k) {
    replicas->drop(k);
    auto i = copies.find(k);
    if (i == copies.end()) return;
    for (auto& peer : i->second)
      cfg.send(peer, wire_msg::object_free{{k.first, k.second}});
    copies.erase(i);
  }

  // Keeps a replica of `m.ref` for `peer`, which hears back once it is kept or why not.
  void keep_replica(const std::string& peer, const wire_msg::object_replicate& m) {
    object_key k{m.ref.id.owner, m.ref.id.seq};
    auto answer = [this, peer, id = m.ref.id](std::string why) {
      cfg.send(peer, wire_msg::object_replicated{id, std::move(why)});
    };
    if (held.count(k)) return answer("");
    fetch_request r{
        m.ref, nullptr, [this, k, answer](result<detail::boxed_value> v) {
          if (!v) return answer(v.err().message);
          auto layout = lay_out(v->ptr, v->type, cfg.values);
          auto& h = held[k];
          if (!h.layout)
            h = {*v, std::shared_ptr<const bulk_layout>{layout, &layout->layout}, 0,
                 nullptr};
          answer("");
        }};
    fetch(r);
  }

  // Ends the pull of `k`, handing `out` to each of its readers; asks other readers kept
  // waiting on it are served from the copy kept, or told it is gone.
  void finish(std::map<object_key, pull_state>::iterator i,
              const result<detail::boxed_value>& out) {
    auto& p = i->second;
    auto waiters = std::move(p.waiters);
    auto parked = std::move(p.parked);
    if (p.bytes_from.empty()) p.bytes_from[p.sources.empty() ? "" : p.sources[0].node];
    for (auto& [from, bytes] : p.bytes_from) {
      if (transfers.size() == transfers_kept) transfers.pop_front();
      transfers.push_back({i->first, from, bytes, !out, p.started_us, detail::now_us()});
    }
    auto k = i->first;
    if (cfg.landings) cfg.landings->drop({k.first, k.second});
    pulls.erase(i);
    for (auto& [type, w] : waiters)
      w(out ? as_type(k, *out, type) : out);
    for (auto& [peer, m] : parked)
      serve(peer, m);
    // Nodes that stop wait for this pull: with it whole here, this copy is the primary.
    for (auto& peer : hand_over.pull_ended(k)) {
      if (auto l = located.find(k); out && l != located.end() && l->second.node == peer)
        primary_here(l);
      cfg.send(peer, wire_msg::objects_taken{{{k.first, k.second}}});
    }
  }

  // The result `l` names stayed on another node: this node's own copy of it is the
  // primary now.
  void primary_here(std::map<object_key, located_object>::iterator l) {
    if (auto s = l->second.slot.lock()) s->set_location(std::nullopt);
    cfg.publish(wire_msg::object_location{
        {l->first.first, l->first.second}, l->second.node, 0, false});
    located.erase(l);
  }

  // This node stops: it hands the results it holds for owners elsewhere over to them.
  void hand_over_held() {
    std::map<std::string, std::vector<object_key>> by_owner;
    for (auto& [k, h] : held)
      if (h.exports == 0)
        if (auto owner = owner_node_of(k, cfg.nodes, cfg.joined);
            !owner.empty() && owner != cfg.node && (!cfg.alive || cfg.alive(owner)))
          by_owner[owner].push_back(k);
    hand_over.start(by_owner);
    for (auto& [owner, keys] : by_owner) {
      wire_msg::objects_hand_over m;
      for (auto& k : keys)
        m.ids.push_back({k.first, k.second});
      cfg.send(owner, std::move(m));
    }
  }

  // Node `peer`, which stops, hands over the results it holds for this node: answered
  // for at once, or once this node's pull of one from there ended.
  void take_over(const std::string& peer, const wire_msg::objects_hand_over& m) {
    wire_msg::objects_taken now;
    for (auto& id : m.ids) {
      object_key k{id.owner, id.seq};
      auto l = located.find(k);
      bool there = l != located.end() && l->second.node == peer;
      if (there && pulls.count(k)) {
        hand_over.await_pull(k, peer);
        continue;
      }
      if (there) primary_here(l);
      now.ids.push_back(id);
    }
    if (!now.ids.empty()) cfg.send(peer, std::move(now));
  }

  void answer_hand_over() {
    if (handing && hand_over.done()) {
      handing->deliver(hand_over.handed());
      handing.reset();
    }
  }

  // Makes the value once the bytes received from offset 0 on hold its whole head; then
  // places what came. An error when the head is malformed.
  std::optional<error> try_make_value(const object_key& k, pull_state& p) {
    bulk_head h;
    std::string why;
    auto state = read_bulk_head(p.prefix.data(), p.prefix.size(), p.total, h, why);
    // Chunks that continue the prefix join it, each once.
    for (auto j = p.early.find(p.prefix.size());
         state == bulk_head_state::incomplete && j != p.early.end();
         j = p.early.find(p.prefix.size())) {
      p.prefix.insert(p.prefix.end(), j->second.bytes(),
                      j->second.bytes() + j->second.size());
      p.early.erase(j);
      state = read_bulk_head(p.prefix.data(), p.prefix.size(), p.total, h, why);
    }
    if (state == bulk_head_state::incomplete) return std::nullopt;
    if (state == bulk_head_state::malformed)
      return error{errc::type_mismatch,
                   "malformed " + p.type->name + " " + id_of(k) + ": " + why};
    p.value =
        p.type->decode_skeleton(p.prefix.data(), h, p.dests, why, cfg.pool, cfg.values);
    if (!p.value)
      return error{errc::type_mismatch, "malformed " + p.type->name + ": " + why};
    p.head_size = h.head_size;
    p.place(0, p.prefix.data(), p.prefix.size());
    for (auto& [offset, chunk] : p.early)
      p.place(offset, chunk.bytes(), chunk.size());
    p.serving = std::make_shared<served_layout>();
    p.serving->value = p.value;
    p.serving->layout.head.assign(p.prefix.begin(),
                                  p.prefix.begin() + static_cast<ptrdiff_t>(h.head_size));
    p.serving->layout.blocks.assign(p.dests.begin(), p.dests.end());
    p.early.clear();
    p.prefix = {};
    for (auto& [offset, a] : p.asked)
      await_landing(k, p, offset, a.length, a.from);
    return std::nullopt;
  }

  void on_chunk(const std::string& peer, wire_msg::object_chunk& m) {
    object_key k{m.id.owner, m.id.seq};
    auto i = pulls.find(k);
    if (i == pulls.end()) return; // failed over, or stopped
    auto& p = i->second;
    // Landed in the value of an earlier pull of the same object that failed.
    if (m.landed && m.source.get() != p.value.get()) return;
    auto asked = p.asked.find(m.offset);
    // An earlier pull's, or asked of another source since.
    if (asked == p.asked.end() || asked->second.from != peer) return;
    if (!m.landed && cfg.landings) cfg.landings->forget(m.id, m.offset);
    auto fail = [&](errc code, const std::string& why) {
      finish(i, error{code, "pulling " + id_of(k) + " from node '" + peer +
                                "' failed: " + why});
    };
    if (!m.missing.empty()) {
      // Another source sends it; one without the object is asked for nothing more. A
      // holder without the object lost it (a node found dead and back again drops what
      // it held for the owners it lost): its owner may remake it.
      auto [offset, len] = std::pair{m.offset, asked->second.length};
      p.asked.erase(asked);
      if ((m.not_yet || drop_source(k, p, peer)) && ask_again(k, p, offset, len, peer))
        return;
      return fail(errc::object_lost, m.missing);
    }
    if (m.total != p.total || m.size() > asked->second.length ||
        (m.size() == 0 && asked->second.length > 0))
      return fail(errc::object_freed, "the chunk at offset " + std::to_string(m.offset) +
                                          " does not fit the object");
    for (auto& n : m.holders)
      if (n != cfg.node &&
          std::none_of(p.sources.begin(), p.sources.end(),
                       [&](const pull_source& s) { return s.node == n; }))
        p.sources.push_back({n, false});
    p.received += m.size();
    p.bytes_from[peer] += m.size();
    p.mark(m.offset, m.size());
    auto whole = pull_source{peer, asked->second.whole};
    if (auto rest = asked->second.length - m.size(); rest > 0)
      ask(k, p, m.offset + m.size(), rest, whole); // a chunk cut where a piece ends
    else
      --p.in_flight;
    p.asked.erase(asked);
    if (m.landed) {
      // Already where it belongs.
    } else if (p.value) {
      p.place(m.offset, m.bytes(), m.size());
    } else {
      p.early[m.offset] = std::move(m);
      if (auto failed = try_make_value(k, p)) return finish(i, *failed);
    }
    if (!p.parked.empty()) serve_parked(p);
    if (p.received < p.total) return request_chunks(k, p);
    if (!p.value)
      return finish(i, error{errc::type_mismatch, "malformed " + p.type->name + " " +
                                                      id_of(k) +
                                                      ": its head never completed"});
    auto v = with_lease(std::move(p.value), std::move(p.lease));
    if (p.freed || !p.type) {
      // Its owner freed it while it came: its readers have it, nothing keeps it. A
      // replica's bytes are held by the replica.
    } else if (copies_here->fits(p.total)) {
      copies_here->keep(k, v, p.type, p.total);
    } else {
      copies_here->remember(k, v, p.type);
    }
    finish(i, detail::boxed_value{v, p.type});
  }

  void forget(const object_key& k) {
    copies_here->drop_kept(k);
    auto i = located.find(k);
    if (i == located.end()) return;
    auto holder = i->second.node;
    located.erase(i);
    cfg.publish(wire_msg::object_location{{k.first, k.second}, holder, 0, false});
  }

  void lost(const std::string& peer, const std::string& why) {
    replicas->lost(peer);
    for (auto i = copies.begin(); i != copies.end();) {
      i->second.erase(peer);
      i = i->second.empty() ? copies.erase(i) : std::next(i);
    }
    for (auto i = pulls.begin(); i != pulls.end();) {
      auto next = std::next(i);
      auto& parked = i->second.parked;
      parked.erase(std::remove_if(parked.begin(), parked.end(),
                                  [&](auto& x) { return x.first == peer; }),
                   parked.end());
      if (!drop_source(i->first, i->second, peer))
        finish(i, lost_error(i->first, peer, why));
      else
        request_chunks(i->first, i->second);
      i = next;
    }
    // Results owned here that stayed there: this node's own copy is the primary now
    // (or, while it was still being pulled, the pull failed and the task is remade).
    for (auto i = located.begin(); i != located.end();) {
      auto next = std::next(i);
      if (i->second.node == peer) primary_here(i);
      i = next;
    }
    hand_over.lost(peer);
    answer_hand_over();
    // Results made here for an owner on that node: nobody will read or free them.
    for (auto i = held.begin(); i != held.end();) {
      if (i->second.exports == 0 &&
          owner_node_of(i->first, cfg.nodes, cfg.joined) == peer)
        i = held.erase(i);
      else
        ++i;
    }
  }
};

using object_manager_self = object_manager_actor::stateful_pointer<object_manager_state>;

object_manager_actor::behavior_type object_manager(object_manager_self self,
                                                   object_manager_config cfg) {
  self->state.cfg = std::move(cfg);
  self->state.replicas = std::make_unique<replication_table>(replication_table::config{
      self->state.cfg.node, self->state.cfg.pick, self->state.cfg.send});
  self->state.copies_here = std::make_unique<pulled_copies>(
      self->state.cfg.keep_pulled_bytes, self->state.cfg.cache);
  // Stopping fails every pull in flight: its readers learn why instead of waiting.
  self->set_exit_handler([=](const caf::exit_msg& x) {
    auto& st = self->state;
    while (!st.pulls.empty()) {
      auto i = st.pulls.begin();
      std::string from;
      for (auto& s : i->second.sources)
        from += (from.empty() ? "node '" : ", '") + s.node + "'";
      st.finish(i, error{errc::runtime_stopped,
                         "node '" + st.cfg.node + "' stopped while pulling " +
                             st.id_of(i->first) + " from " + from});
    }
    self->quit(x.reason);
  });
  return {
      [=](hold_atom, hold_request& r) { self->state.hold(r); },
      [=](release_atom, const std::vector<object_key>& keys) {
        self->state.release(keys);
      },
      [=](free_atom, const object_key& k) {
        auto& st = self->state;
        st.held.erase(k);
        st.copies_here->forget(k);
        if (auto i = st.pulls.find(k); i != st.pulls.end()) i->second.freed = true;
        st.drop_copies(k);
      },
      [=](freed_atom, const object_key& k) {
        auto& st = self->state;
        if (auto h = st.held.find(k); h != st.held.end() && h->second.replicated) {
          if (h->second.exports == 0)
            st.held.erase(h);
          else
            h->second.replicated = false;
        }
        st.drop_copies(k);
      },
      [=](replicate_atom, replicate_request& r) { self->state.replicate(r); },
      [=](replica_atom, const std::string& peer, const wire_msg::object_replicate& m) {
        self->state.keep_replica(peer, m);
      },
      [=](replicated_atom, const std::string& peer,
          const wire_msg::object_replicated& m) {
        auto& st = self->state;
        // A replica not made says so somewhere: the put itself succeeded.
        if (!m.error.empty() && st.cfg.warn)
          st.cfg.warn("node '" + peer + "' did not keep a replica of object " +
                      st.id_of({m.id.owner, m.id.seq}) + ": " + m.error +
                      " (another node is asked, if one is left)");
        st.replicas->answered(peer, {m.id.owner, m.id.seq}, m.error);
      },
      [=](pull_atom, const std::string& peer, const wire_msg::object_pull& m) {
        self->state.serve(peer, m);
      },
      [=](chunk_atom, const std::string& peer, wire_msg::object_chunk& m) {
        self->state.on_chunk(peer, m);
      },
      [=](fetch_atom, fetch_request& r) { self->state.fetch(r); },
      [=](locate_atom, located_object& o) {
        auto k = o.key;
        self->state.located[k] = std::move(o);
      },
      [=](forget_atom, const object_key& k) { self->state.forget(k); },
      [=](lost_atom, const std::string& peer, const std::string& why) {
        self->state.lost(peer, why);
      },
      [=](hand_over_atom) -> caf::result<uint64_t> {
        auto& st = self->state;
        st.hand_over_held();
        if (st.hand_over.done()) return st.hand_over.handed();
        st.handing = self->make_response_promise<uint64_t>();
        return *st.handing;
      },
      [=](hand_over_atom, const std::string& peer, const wire_msg::objects_hand_over& m) {
        self->state.take_over(peer, m);
      },
      [=](handed_atom, const std::string& peer, const wire_msg::objects_taken& m) {
        auto& st = self->state;
        std::vector<object_key> keys;
        for (auto& id : m.ids)
          keys.emplace_back(id.owner, id.seq);
        st.hand_over.taken(peer, keys);
        st.answer_hand_over();
      },
      [=](count_atom) {
        return static_cast<uint64_t>(self->state.copies_here->remembered_count());
      },
      [=](kept_atom) { return self->state.copies_here->kept_bytes(); },
      [=](transfers_atom) {
        auto& t = self->state.transfers;
        return std::vector<transfer_event>(t.begin(), t.end());
      },
  };
}

} // namespace

std::string owner_node_of(const object_key& k, const std::vector<std::string>& nodes,
                          const joined_names& joined) {
  auto index = k.first >> owner_index_shift;
  if (index == 0) return {};
  if (index > nodes.size()) return joined ? joined(index) : std::string{};
  return nodes[index - 1];
}

object_manager_actor spawn_object_manager(caf::actor_system& sys,
                                          object_manager_config cfg, bool detached) {
  if (detached) return sys.spawn<caf::detached>(object_manager, std::move(cfg));
  return sys.spawn(object_manager, std::move(cfg));
}

} // namespace swarm::actors
