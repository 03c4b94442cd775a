#include "actors/objects/object_manager_state.hpp"

#include <caf/all.hpp>

#include <algorithm>
#include <cmath>
#include <tuple>

#include "framework/detail/task_spec.hpp"

// The object manager's pulls: serving the chunks others ask of this node, and pulling
// objects from others into values here.

namespace swarm::actors {

pulled_copy object_manager_state::copy_here(const object_key& k) const {
  auto c = copies_here->kept(k);
  return c.value ? c : copies_here->remembered(k);
}

std::shared_ptr<served_layout>
object_manager_state::copy_layout(const object_key& k) const {
  auto c = copy_here(k);
  if (!c.value) return nullptr;
  return lay_out(std::move(c.value), c.type, cfg.values);
}

std::optional<detail::boxed_value>
object_manager_state::value_here(const object_key& k) const {
  if (auto i = held.find(k); i != held.end()) return i->second.value;
  auto c = copy_here(k);
  if (!c.value) return std::nullopt;
  return detail::boxed_value{std::move(c.value), c.type};
}

void object_manager_state::serve(const std::string& peer,
                                 const wire_msg::object_pull& m) {
  object_key k{m.id.owner, m.id.seq};
  if (!m.reader_host.empty()) {
    auto v = value_here(k);
    return cfg.send(peer, lending->lend(peer, k, v ? &*v : nullptr, m.reader_host));
  }
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
  std::string unread;
  if (!l && cfg.earlier_owner && cfg.earlier_owner(k.first)) {
    c.missing = "object " + id_of(k) + "'s owner was an earlier life of node '" +
                cfg.node + "', whose process ended: the object went with it";
    c.owner_gone = true;
  } else if (!l) {
    c.missing =
        "node '" + cfg.node + "' holds no object " + id_of(k) + " (freed, or never here)";
  } else if (!l->fill(m.offset, length, unread)) { // this chunk's bytes only
    c.missing = "node '" + cfg.node + "' cannot send " + id_of(k) + ": " + unread;
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

void object_manager_state::serve_parked(pull_state& p) {
  auto parked = std::move(p.parked);
  p.parked.clear();
  for (auto& [peer, m] : parked)
    if (p.available(m.offset) > 0)
      serve(peer, m);
    else
      p.parked.emplace_back(peer, m);
}

void object_manager_state::ask(const object_key& k, pull_state& p, uint64_t offset,
                               uint64_t len, const pull_source& from) {
  cfg.send(from.node, wire_msg::object_pull{{k.first, k.second}, offset, len});
  p.asked[offset] = {len, from.node, from.whole};
  await_landing(k, p, offset, len, from.node);
}

bool object_manager_state::ask_again(const object_key& k, pull_state& p, uint64_t offset,
                                     uint64_t len, const std::string& failed) {
  for (auto& s : p.sources)
    if (s.whole && s.node != failed) {
      ask(k, p, offset, len, s);
      return true;
    }
  return false;
}

bool object_manager_state::drop_source(const object_key& k, pull_state& p,
                                       const std::string& node) {
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

void object_manager_state::await_landing(const object_key& k, pull_state& p,
                                         uint64_t offset, uint64_t len,
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

double pull_weight(int32_t priority, double job_share) {
  auto steps = std::clamp(priority, -8, 8);
  return std::max(job_share, 1e-6) * std::pow(pull_priority_step, steps);
}

size_t object_manager_state::scale_of(const pull_state& p) const {
  auto lightest = p.weight;
  for (auto& [k, other] : pulls)
    lightest = std::min(lightest, other.weight);
  auto scale = std::llround(p.weight / lightest);
  return std::clamp<size_t>(static_cast<size_t>(std::max<long long>(scale, 1)), 1,
                            max_pull_scale);
}

void object_manager_state::request_chunks(const object_key& k, pull_state& p) {
  if (!p.sharing.empty()) return; // asked to share first
  auto window =
      cfg.pull_window * std::min<size_t>(p.sources.size(), max_striped) * scale_of(p);
  while (p.in_flight < window && p.next_offset < p.total) {
    auto len = std::min(cfg.chunk_bytes, p.total - p.next_offset);
    auto& from = p.sources[p.turn++ % std::min(p.sources.size(), max_striped)];
    ask(k, p, p.next_offset, len, from);
    p.next_offset += len;
    ++p.in_flight;
  }
}

result<std::unique_ptr<detail::store_lease>>
object_manager_state::reserve(const object_key& k, uint64_t bytes) {
  if (!cfg.reserve) return std::unique_ptr<detail::store_lease>{};
  auto r = cfg.reserve(k, bytes);
  while (!r && r.err().code == errc::store_full && copies_here->drop_least_recent())
    r = cfg.reserve(k, bytes);
  if (!r)
    return error{r.err().code, "node '" + cfg.node + "' cannot pull " + id_of(k) + ": " +
                                   r.err().message};
  return r;
}

std::vector<pull_source>
object_manager_state::sources_of(const wire_msg::remote_ref& ref) const {
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

result<detail::boxed_value>
object_manager_state::as_type(const object_key& k, const detail::boxed_value& v,
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
      made = type->decode_skeleton(bytes.data(), h, dests, why, cfg.pool, cfg.values,
                                   nullptr);
    uint64_t at = h.head_size;
    for (auto& d : dests)
      at += d.second;
    if (made && at == bytes.size()) place_blocks(h.head_size, dests, 0, bytes.data(), at);
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

std::shared_ptr<const void>
object_manager_state::with_lease(std::shared_ptr<const void> v,
                                 std::unique_ptr<detail::store_lease> lease) {
  if (!lease) return v;
  auto counted = std::make_shared<
      std::pair<std::shared_ptr<const void>, std::unique_ptr<detail::store_lease>>>(
      v, std::move(lease));
  return std::shared_ptr<const void>{counted, v.get()};
}

void object_manager_state::fetch(fetch_request& r) {
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
    auto& p = i->second;
    p.waiters.emplace_back(r.type, std::move(r.done));
    if (r.weight > p.weight) {
      p.weight = r.weight;
      request_chunks(k, p);
    }
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
  p.weight = r.weight;
  p.waiters.emplace_back(r.type, std::move(r.done));
  if (!p.type) {
    // A replica: the layout's bytes, received in place from the start.
    auto bytes = std::make_shared<std::vector<uint8_t>>(p.total);
    p.dests = {{bytes->data(), bytes->size()}};
    p.value = bytes;
    p.serving = lay_out(bytes, nullptr, nullptr);
  }
  if (lending->asks_share(p.type)) {
    p.sharing = p.sources.front().node;
    return cfg.send(p.sharing,
                    wire_msg::object_pull{{k.first, k.second}, 0, 0, lending->host()});
  }
  request_chunks(k, p);
}

void object_manager_state::on_share(const std::string& peer,
                                    const wire_msg::device_share& m) {
  object_key k{m.id.owner, m.id.seq};
  auto i = pulls.find(k);
  auto unmapped = [&] { cfg.send(peer, wire_msg::device_released{m.id}); };
  if (i == pulls.end() || i->second.sharing != peer) {
    if (!m.handle.empty()) unmapped(); // failed over, or stopped meanwhile
    return;
  }
  auto& p = i->second;
  p.sharing.clear();
  if (!m.handle.empty()) {
    auto v = lending->map(m, [me = self, peer, k] {
      if (auto h = caf::actor_cast<object_manager_actor>(me))
        caf::anon_send(h, unmapped_atom::value, peer, k);
    });
    if (v) {
      // No host memory is taken: the store counts nothing for it.
      p.lease.reset();
      p.bytes_from.try_emplace(peer, 0);
      copies_here->remember(k, v->ptr, p.type);
      return finish(i, *v);
    }
    unmapped();
    if (cfg.warn)
      cfg.warn("node '" + cfg.node + "' could not map the device buffer " + id_of(k) +
               " node '" + peer + "' shared: " + v.err().message +
               "; it pulls its bytes instead");
  }
  request_chunks(k, p);
}

void object_manager_state::finish(std::map<object_key, pull_state>::iterator i,
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

std::optional<error> object_manager_state::try_make_value(const object_key& k,
                                                          pull_state& p) {
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
  p.value = p.type->decode_skeleton(p.prefix.data(), h, p.dests, why, cfg.pool,
                                    cfg.values, &p.landed);
  if (!p.value)
    return error{errc::type_mismatch, "malformed " + p.type->name + ": " + why};
  p.head_size = h.head_size;
  p.place(0, p.prefix.data(), p.prefix.size());
  p.arrived(0, p.prefix.size());
  for (auto& [offset, chunk] : p.early) {
    p.place(offset, chunk.bytes(), chunk.size());
    p.arrived(offset, chunk.size());
  }
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

void object_manager_state::on_chunk(const std::string& peer, wire_msg::object_chunk& m) {
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
    finish(i, error{code,
                    "pulling " + id_of(k) + " from node '" + peer + "' failed: " + why});
  };
  if (!m.missing.empty()) {
    // Another source sends it; one without the object is asked for nothing more. A
    // holder without the object lost it (a node found dead and back again drops what
    // it held for the owners it lost): its owner may remake it.
    auto [offset, len] = std::pair{m.offset, asked->second.length};
    p.asked.erase(asked);
    if ((m.not_yet || drop_source(k, p, peer)) && ask_again(k, p, offset, len, peer))
      return;
    return fail(m.owner_gone ? errc::owner_died : errc::object_lost, m.missing);
  }
  if (m.total != p.total || m.size() > asked->second.length ||
      (m.size() == 0 && asked->second.length > 0))
    return fail(errc::object_freed, "the chunk at offset " + std::to_string(m.offset) +
                                        " does not fit the object");
  for (auto& n : m.holders)
    if (n != cfg.node && std::none_of(p.sources.begin(), p.sources.end(),
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
  if (m.landed || p.value) {
    if (!m.landed) p.place(m.offset, m.bytes(), m.size()); // else where it belongs
    p.arrived(m.offset, m.size());
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

} // namespace swarm::actors
