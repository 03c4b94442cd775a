#include "actors/control_store/gcs_shard.hpp"

#include <caf/all.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <deque>
#include <memory>
#include <optional>

#include "actors/control_store/gcs_chain.hpp"
#include "actors/control_store/protocol.hpp"

namespace swarm::actors {

namespace {

// A write waiting for the chain's tail to acknowledge it.
struct pending_write {
  uint64_t seq;
  gcs_record rec;
  caf::response_promise reply;
};

struct gcs_state {
  gcs_shard_config config;
  // Live pointers into this process: they mean nothing after a restart, so they are
  // never persisted (a restarted node's actors register their names again).
  std::map<std::string, detail::actor_record_ptr> named_actors;
  // The rows every chain member has: what reads see.
  row_tables tables;
  // With `config.dir`: every write is on disk before it goes down the chain.
  std::optional<gcs_log> log;
  size_t failed_writes = 0; // since the last write the disk took

  // As the chain's head: the members (this node first), the configuration's epoch, and
  // the writes sent down the chain that the tail has not acknowledged yet.
  std::vector<std::string> chain;
  uint64_t epoch = 0;
  uint64_t next_seq = 1;
  uint64_t committed_seq = 0;
  std::deque<pending_write> pending;
  // Started with nothing (no disk): the first chain's members may hold its rows, so it
  // recovers them first, asking one member at a time.
  bool fresh = true;
  // A key-value shard: the placement version at which its chain last changed (0: none,
  // its epochs come from the wall clock), and the one at which this node last joined a
  // chain that existed before (0: none). Recovering, the newest copy it found (its
  // epoch).
  uint64_t placed = 0;
  uint64_t joined = 0;
  uint64_t recovered_epoch = 0;
  // Recovering: the latest version at which a member that had no copy joined the
  // chain (0: none did): the chain had rows then, which that member never got.
  uint64_t missed = 0;
  // Recovering: a member whose placement the head's agrees with kept its copy since it
  // joined: the rows taken hold every write the chain acknowledged.
  bool recovered_whole = false;
  bool recovering = false;
  std::vector<std::string> asked;
  bool unanswered = false; // a member asked did not answer in time
  uint32_t asks = 0;       // of the member asked last

  // As a member further down a chain: the configuration it follows and the last write
  // it applied.
  uint64_t member_epoch = 0;
  uint64_t member_seq = 0;

  bool owns(const std::string& key) const {
    return shard_of(key, config.count) == config.index;
  }

  bool replicating() const { return chain.size() > 1; }

  // Set when it stepped down as a chain's head: the node that heads it now. Writes
  // here fail (their writers ask that node) until it heads a chain again.
  std::optional<std::string> moved_to;

  uint32_t chain_id() const {
    return static_cast<uint32_t>(config.chain_id.value_or(config.index));
  }
};

caf::error not_found(const std::string& what) {
  return caf::make_error(caf::sec::runtime_error, what);
}

// Logs `line` about shard `cfg`.
void note(const gcs_shard_config& cfg, log_level level, const std::string& line) {
  bool kv = cfg.chain_id && *cfg.chain_id != cfg.index;
  cfg.logger.write(level, std::string{kv ? "key-value shard " : "control-store shard "} +
                              std::to_string(cfg.index) + ": " + line);
}

// Appends `rec` to the log (when persisting). A refused write is not applied nor sent
// down the chain: the tables never hold what the disk does not.
// TODO(perf): one fdatasync per write, on this actor's thread; heartbeats rewrite node
// rows often. Group commit (sync once per drained mailbox) would batch them.
caf::error persist(gcs_state& st, const gcs_record& rec) {
  if (!st.log) return {};
  if (auto ok = st.log->append(rec); !ok) {
    // Logged on the first failure and every 100th after: heartbeats write often.
    if (st.failed_writes++ % 100 == 0)
      note(st.config, log_level::error,
           "write of '" + rec.table + "/" + rec.key + "' refused (" +
               std::to_string(st.failed_writes) + " so far): " + ok.err().to_string());
    return caf::make_error(caf::sec::runtime_error,
                           "control store write not persisted: " + ok.err().to_string());
  }
  if (st.failed_writes > 0) {
    note(st.config, log_level::warn,
         "writes persist again after " + std::to_string(st.failed_writes) + " refused");
    st.failed_writes = 0;
  }
  return {};
}

// Applies a write every chain member has.
void apply_committed(gcs_state& st, const gcs_record& rec) {
  apply_record(st.tables, rec);
  // The snapshot must hold every logged record: not while writes are still in the chain.
  // The write is durable in the log either way; a failed snapshot is retried later.
  if (st.log && st.pending.empty() && st.log->snapshot_due())
    if (auto ok = st.log->snapshot(st.tables); !ok)
      note(st.config, log_level::error,
           "snapshot failed, the log keeps growing: " + ok.err().to_string());
}

wire_msg::gcs_chain chain_msg(const gcs_state& st, wire_msg::gcs_chain::kind_type what,
                              uint64_t epoch, uint64_t seq,
                              std::vector<gcs_record> recs = {}) {
  return {st.chain_id(), what, epoch, seq, st.chain, encode_records(recs)};
}

// Answers and applies every pending write up to `seq` (all of them without a chain).
void commit_up_to(gcs_state& st, uint64_t seq) {
  while (!st.pending.empty() && st.pending.front().seq <= seq) {
    auto w = std::move(st.pending.front());
    st.pending.pop_front();
    apply_committed(st, w.rec);
    st.committed_seq = w.seq;
    w.reply.deliver(caf::unit);
  }
}

using shard_actor = caf::stateful_actor<gcs_state>*;
using chain_kind = wire_msg::gcs_chain::kind_type;

// How long a restarted head waits for a member's copy before it asks the next one.
constexpr auto recovery_timeout = std::chrono::milliseconds(2000);
constexpr uint32_t asks_per_member = 8; // within the timeout

// A write from this node: on disk, then down the chain (or applied at once without one).
// While the shard recovers its rows from the chain, writes wait for that.
caf::result<void> write(shard_actor self, gcs_record rec) {
  auto& st = self->state;
  if (st.moved_to)
    return caf::make_error(caf::sec::runtime_error,
                           "control-store shard " + std::to_string(st.config.index) +
                               " is served by node '" + *st.moved_to + "' now");
  if (auto err = persist(st, rec)) return err;
  if (!st.replicating() && !st.recovering) {
    apply_committed(st, rec);
    return caf::unit;
  }
  auto seq = st.next_seq++;
  auto rp = self->make_response_promise();
  if (!st.recovering)
    st.config.link->send(st.chain[1],
                         chain_msg(st, chain_kind::write, st.epoch, seq, {rec}));
  st.pending.push_back({seq, std::move(rec), rp});
  return rp;
}

// Sends the chain the whole shard, then every write it has not acknowledged, so the new
// tail can acknowledge them.
void sync_chain(gcs_state& st) {
  auto& next = st.chain[1];
  st.config.link->send(next, chain_msg(st, chain_kind::sync, st.epoch, st.committed_seq,
                                       records_of(st.tables)));
  for (auto& w : st.pending)
    st.config.link->send(next,
                         chain_msg(st, chain_kind::write, st.epoch, w.seq, {w.rec}));
}

// Without a recovery under way: the chain gets the shard, or, with no chain, every write
// waiting applies.
void resume(gcs_state& st) {
  if (st.replicating())
    sync_chain(st);
  else
    commit_up_to(st, st.next_seq);
}

// A member that kept its copy since it joined its chain (the head's word: no placement
// dropped it meanwhile) has every write the chain acknowledged: none was without passing
// it.
bool kept_since_joined(const gcs_state& st) {
  return st.member_epoch != 0 && st.member_epoch >= st.joined << 10;
}

// Whether the placement this node knows has `member` in the chain of `st`'s shard since
// `since` (what the member says of itself).
bool placed_since(const gcs_state& st, const std::string& member, uint64_t since) {
  auto p = st.config.link->placement();
  for (auto& c : p->chains) {
    if (c.shard != st.config.index) continue;
    auto at = std::find(c.members.begin(), c.members.end(), member);
    auto i = static_cast<size_t>(at - c.members.begin());
    return at != c.members.end() && i < c.since.size() && c.since[i] == since;
  }
  return false;
}

// A key-value shard that joined an existing chain and ends its recovery with rows older
// than that chain's: every member that had the chain's rows is gone (two lost at once,
// with a chain of two), and the writes it acknowledged before may be lost. It goes on
// (the table stays available) and says so, loudly. A member promoted with the copy it
// kept since it joined has every write the chain acknowledged; so has one that took the
// copy of a member that did.
void check_complete(gcs_state& st) {
  if (st.recovered_whole || kept_since_joined(st)) return;
  auto since = std::max(st.joined, st.missed);
  if (since == 0 || std::max(st.member_epoch, st.recovered_epoch) >= since << 10) return;
  note(st.config, log_level::error,
       "no live member holds the rows its chain had at placement version " +
           std::to_string(since) + ": writes acknowledged before may be lost");
}

// Recovering: asks the member asked last for its copy (again: the ask, or its answer, may
// have gone with a connection that closed), and looks again after a while.
void ask_again(shard_actor self) {
  auto& st = self->state;
  ++st.asks;
  st.config.link->send(st.asked.back(), chain_msg(st, chain_kind::resync, st.epoch, 0));
  self->delayed_send(self, recovery_timeout / asks_per_member, chain_atom::value,
                     st.epoch, st.asked.size());
}

// Recovering: asks the next member not asked yet for its copy of the shard, or, when
// every member was asked, goes on with the rows it has.
void ask_next(shard_actor self) {
  auto& st = self->state;
  for (size_t i = 1; i < st.chain.size(); ++i) {
    auto& m = st.chain[i];
    if (std::find(st.asked.begin(), st.asked.end(), m) != st.asked.end()) continue;
    st.asked.push_back(m);
    st.asks = 0;
    ask_again(self);
    return;
  }
  check_complete(st);
  // Members that said they never had a copy: a new shard, nothing lost.
  note(st.config, st.unanswered ? log_level::warn : log_level::info,
       !st.tables.empty() ? "no other chain member had a copy: it goes on with its own"
       : st.unanswered    ? "no chain member had rows to recover: it starts empty"
                          : "no chain member had a copy: a new shard");
  st.unanswered = false;
  st.recovering = false;
  resume(st);
}

// A head no longer heads its chain, `why`: its uncommitted writes fail, and its rows stay
// as a member's copy of its last configuration.
void demote(gcs_state& st, const caf::error& why) {
  for (auto& w : st.pending)
    w.reply.deliver(why);
  st.pending.clear();
  // Their numbers are given again: the writes of a later configuration follow its sync
  // without a gap, which a member would take for writes lost on the way.
  st.next_seq = st.committed_seq + 1;
  // A head still recovering never had its configuration's rows: its copy stays what it
  // was (none, for one that started empty).
  if (!st.recovering) {
    st.member_epoch = st.epoch;
    st.member_seq = st.committed_seq;
  }
  st.chain.clear();
  st.recovering = false;
  st.asked.clear();
  // Should it head a chain again, others may have newer rows: it recovers first.
  st.fresh = !st.log;
}

// Told of a chain another node heads: a head steps down.
void step_down(shard_actor self, const std::vector<std::string>& members) {
  auto& st = self->state;
  st.moved_to = members.front();
  if (st.chain.empty()) return;
  demote(st, caf::make_error(caf::sec::runtime_error,
                             "control-store shard " + std::to_string(st.config.index) +
                                 " moved to node '" + members.front() +
                                 "' before the write was committed"));
  note(st.config, log_level::info, "now served by node '" + members.front() + "'");
}

// A new chain (this node first). A shard that started with nothing (no disk, or a crash),
// or was a member until now, first recovers the rows the other members kept; the others
// sync the new chain.
void reconfigure(shard_actor self, std::vector<std::string> members) {
  auto& st = self->state;
  auto me = st.config.link->self();
  if (!members.empty() && !me.empty() && members.front() != me)
    return step_down(self, members);
  st.moved_to.reset();
  // Later than any configuration before, also those of an earlier run of this head; a
  // key-value shard's from its placement's version (the cluster head's clock), which
  // every member compares alike.
  auto base = st.placed != 0 ? st.placed : st.config.wall_clock();
  st.epoch = std::max(st.epoch + 1, base << 10);
  st.chain = std::move(members);
  if (st.fresh && st.replicating()) {
    st.fresh = false;
    st.recovering = true;
    st.recovered_epoch = 0;
    st.recovered_whole = false;
    st.missed = 0;
    st.asked.clear(); // every member is asked again, also after an earlier recovery
  }
  if (st.recovering)
    ask_next(self);
  else
    resume(st);
}

// A member's copy, asked for while recovering: its rows join those written since this
// shard started (which win), and the chain is synced with the result. Node rows say
// alive only once their node is heard from again.
void recover_from(shard_actor self, const wire_msg::gcs_chain& m,
                  std::vector<gcs_record> recs) {
  auto& st = self->state;
  const auto& from = m.members[1];
  auto epoch = m.epoch;
  auto seq = m.seq;
  if (std::find(st.asked.begin(), st.asked.end(), from) == st.asked.end()) return;
  if (epoch == 0) { // that member never had a copy, since it joined
    st.missed = std::max(st.missed, m.since);
    ask_next(self);
    return;
  }
  // The newer of a whole copy and this shard's own is whole too: a later configuration's
  // sync reached every member in it, and the member was in each.
  if (m.complete && placed_since(st, from, m.since)) st.recovered_whole = true;
  size_t merged = 0;
  if (st.member_epoch != 0) {
    // A member until now: the newer of the two copies is the shard.
    if (std::make_pair(epoch, seq) > std::make_pair(st.member_epoch, st.member_seq)) {
      st.tables.clear();
      for (auto& r : recs)
        apply_record(st.tables, r);
      merged = recs.size();
      st.recovered_epoch = std::max(st.recovered_epoch, epoch);
    }
  } else {
    st.recovered_epoch = std::max(st.recovered_epoch, epoch);
    for (auto& r : recs) {
      auto& t = st.tables[r.table];
      if (t.count(r.key) != 0 || !r.row) continue;
      if (auto* n = std::get_if<wire_msg::node_info>(&*r.row)) n->alive = false;
      t.emplace(r.key, std::move(*r.row));
      ++merged;
    }
  }
  note(st.config, log_level::info,
       st.member_epoch != 0 && merged == 0
           ? "its copy is as new as node '" + from + "''s: it goes on with it"
           : "recovered " + std::to_string(merged) + " rows from node '" + from + "'");
  check_complete(st);
  st.recovering = false;
  reconfigure(self, st.chain);
}

// A chain message from another member.
void on_chain(shard_actor self, wire_msg::gcs_chain&& m) {
  auto& st = self->state;
  auto self_name = st.config.link->self();
  bool heads_chain = !st.chain.empty() && st.chain.front() == self_name;
  if (m.kind == chain_kind::ack) {
    if (heads_chain && m.epoch == st.epoch && !st.recovering) commit_up_to(st, m.seq);
    return;
  }
  // A resync naming another head comes from a head recovering (a member's names none).
  bool from_new_head = !m.members.empty() && m.members.front() != self_name;
  if (m.kind == chain_kind::resync && !from_new_head) {
    if (heads_chain && m.epoch > st.epoch && st.placed != 0 && !st.recovering) {
      // A member knows of a later placement than this head's. Where the node's latest
      // placement has this node head the same chain (it missed those in between), it
      // recovers the rows written since (the members' copies), then goes on; else it
      // waits for the placement that moves it.
      auto p = st.config.link->placement();
      auto shard = st.config.index;
      for (auto& c : p->chains)
        if (c.shard == shard && c.members == st.chain && (p->version << 10) >= m.epoch) {
          st.placed = p->version;
          st.fresh = true;
          reconfigure(self, st.chain);
        }
    } else if (heads_chain && m.epoch == st.epoch && st.replicating() && !st.recovering) {
      // A member without this configuration's sync, or that missed writes: the chain
      // gets the whole shard again. An ask about an earlier configuration needs none:
      // the sync of every later one was sent after it (a write in flight behind a lost
      // one asks too, and a burst would copy the shard once per write).
      reconfigure(self, st.chain);
    }
    return;
  }
  if (m.kind == chain_kind::resync) {
    // A head recovering (restarted, or a member promoted): it gets this copy, the
    // committed rows when this node still heads the chain it takes over.
    auto copy = heads_chain ? chain_msg(st, chain_kind::sync, st.epoch, st.committed_seq,
                                        records_of(st.tables))
                            : chain_msg(st, chain_kind::sync, st.member_epoch,
                                        st.member_seq, records_of(st.tables));
    // Since when it is a member (one without a copy: the chain's rows were somewhere
    // then), and whether it kept its copy all that time.
    copy.since = st.joined;
    copy.complete = heads_chain ? !st.recovering : kept_since_joined(st);
    copy.members = {m.members.front(), self_name};
    st.config.link->send(m.members.front(), std::move(copy));
    return;
  }
  if (m.members.empty()) return;
  auto recs = decode_records(m.records);
  if (!recs) {
    note(st.config, log_level::warn,
         "chain message from '" + m.members.front() +
             "' dropped: " + recs.err().to_string());
    return;
  }
  if (m.members.front() == self_name) {
    if (m.kind == chain_kind::sync && st.recovering && m.members.size() == 2)
      recover_from(self, m, std::move(*recs));
    return;
  }
  // Another node's chain, while this shard heads its own, or a configuration older than
  // this shard's last placement: that head was replaced (or this node left its chain)
  // and has not heard yet. Its writes are neither applied nor acknowledged, so it
  // commits none of them (they fail when it steps down, and their writers ask the new
  // head); a write is answered with the later configuration, which makes it recover the
  // rows written since, should it head the chain after all.
  auto later = heads_chain ? st.epoch : st.placed << 10;
  if (heads_chain || (st.placed != 0 && m.epoch < later)) {
    if (m.kind == chain_kind::write && m.epoch < later) {
      auto notice = chain_msg(st, chain_kind::resync, later, 0);
      notice.members.clear();
      st.config.link->send(m.members.front(), std::move(notice));
    }
    return;
  }
  if (m.kind == chain_kind::sync) {
    if (m.epoch < st.member_epoch) return; // an older configuration
    st.member_epoch = m.epoch;
    st.member_seq = m.seq;
    st.tables.clear();
    for (auto& r : *recs)
      apply_record(st.tables, r);
  } else if (m.epoch != st.member_epoch) {
    // A write of a configuration whose sync this member never had (it restarted, or
    // joined late): it cannot apply it, so it asks the head for the whole shard.
    if (m.epoch > st.member_epoch) {
      auto ask = chain_msg(st, chain_kind::resync, m.epoch, st.member_seq);
      ask.members.clear();
      st.config.link->send(m.members.front(), std::move(ask));
    }
    return;
  } else if (m.seq > st.member_seq + 1) {
    // Writes before it were lost (with a connection that closed): acknowledging this one
    // would acknowledge them too. The member asks the head for the whole shard instead.
    auto ask = chain_msg(st, chain_kind::resync, m.epoch, st.member_seq);
    ask.members.clear();
    st.config.link->send(m.members.front(), std::move(ask));
    return;
  } else if (m.seq == st.member_seq + 1) {
    for (auto& r : *recs)
      apply_record(st.tables, r);
    st.member_seq = m.seq;
  }
  auto next = successor(m.members, self_name);
  if (next.empty()) {
    auto ack = chain_msg(st, chain_kind::ack, m.epoch, st.member_seq);
    ack.members = m.members;
    st.config.link->send(m.members.front(), std::move(ack));
  } else {
    st.config.link->send(next, std::move(m));
  }
}

caf::behavior gcs_shard(caf::stateful_actor<gcs_state>* self, gcs_shard_config cfg,
                        std::shared_ptr<gcs_log::recovery> recovered) {
  self->state.config = std::move(cfg);
  if (recovered) {
    self->state.fresh = false; // the disk holds the truth
    self->state.tables = std::move(recovered->tables);
    self->state.log.emplace(std::move(recovered->log));
  }
  return {
      [self](register_atom, const std::string& name,
             detail::actor_record_ptr& rec) -> caf::result<bool> {
        if (!self->state.owns(name))
          return not_found("actor name '" + name + "' belongs to another shard");
        // A name whose actor died for good may be taken again.
        auto& slot = self->state.named_actors[name];
        if (slot && !slot->dead()) return false;
        slot = std::move(rec);
        return true;
      },
      [self](lookup_atom,
             const std::string& name) -> caf::result<detail::actor_record_ptr> {
        auto& actors = self->state.named_actors;
        auto i = actors.find(name);
        if (i == actors.end() || i->second->dead())
          return not_found("no live actor is named '" + name + "'");
        return i->second;
      },
      [self](forget_atom, const std::string& name) {
        self->state.named_actors.erase(name);
      },
      [self](lookup_atom, const std::string& table,
             const std::string& name) -> caf::result<std::string> {
        if (table != "function") return not_found("unknown table '" + table + "'");
        auto& fns = self->state.config.functions;
        auto i = fns.find(name);
        if (i == fns.end()) return not_found("no function named '" + name + "'");
        return i->second;
      },
      [self](put_atom, const std::string& table, const std::string& key,
             table_row& row) -> caf::result<void> {
        return write(self, {table, key, std::move(row)});
      },
      [self](erase_atom, const std::string& table,
             const std::string& key) -> caf::result<void> {
        auto& st = self->state;
        auto t = st.tables.find(table);
        // Nothing to erase, unless a put of it is still on its way down the chain.
        if ((t == st.tables.end() || t->second.count(key) == 0) && st.pending.empty())
          return caf::unit;
        return write(self, {table, key, std::nullopt});
      },
      [self](chain_atom, std::vector<std::string>& members) {
        reconfigure(self, std::move(members));
      },
      [self](chain_atom, std::vector<std::string>& members, uint64_t placed,
             uint64_t joined) {
        auto& st = self->state;
        // A head the placement names a member only since a later version than the last
        // it knew was dropped meanwhile (it never heard: cut off, say), while the chain
        // wrote on without it: its rows are an old member's copy, and it recovers the
        // chain's before it heads it again.
        if (!st.chain.empty() && st.chain.front() == st.config.link->self() &&
            joined > st.placed) {
          demote(st, caf::make_error(caf::sec::runtime_error,
                                     "control-store shard " +
                                         std::to_string(st.config.index) +
                                         " was dropped from its chain before the write "
                                         "was committed"));
          note(st.config, log_level::info,
               "dropped from its chain meanwhile: it recovers the chain's rows first");
        }
        st.placed = placed;
        st.joined = joined;
        reconfigure(self, std::move(members));
      },
      [self](chain_atom, wire_msg::gcs_chain& m) { on_chain(self, std::move(m)); },
      [self](chain_atom, uint64_t epoch, size_t asked) {
        // The member asked for its copy has not answered yet: it is asked again, and
        // after the timeout the next one is.
        auto& st = self->state;
        if (!st.recovering || st.epoch != epoch || st.asked.size() != asked) return;
        if (st.asks < asks_per_member) return ask_again(self);
        st.unanswered = true;
        ask_next(self);
      },
      [self](get_atom, const std::string& table,
             const std::string& key) -> caf::result<table_row> {
        auto& t = self->state.tables[table];
        auto i = t.find(key);
        if (i == t.end())
          return not_found("no row '" + key + "' in table '" + table + "'");
        return i->second;
      },
      [self](scan_atom, const std::string& table) {
        std::vector<table_row> rows;
        if (auto t = self->state.tables.find(table); t != self->state.tables.end())
          for (auto& [k, row] : t->second)
            rows.push_back(row);
        return rows;
      },
      [self](scan_atom, const std::string& table, const std::string& key) {
        std::vector<table_row> rows;
        if (auto t = self->state.tables.find(table); t != self->state.tables.end())
          if (auto i = t->second.find(key); i != t->second.end())
            rows.push_back(i->second);
        return rows;
      },
      [self](stats_atom) {
        size_t rows = 0;
        for (auto& [name, t] : self->state.tables)
          rows += t.size();
        return caf::make_message(self->state.config.functions.size(),
                                 self->state.named_actors.size(), rows);
      },
      [self](stats_atom, chain_atom) {
        auto& st = self->state;
        return caf::make_message(st.chain, st.pending.size(), st.member_epoch,
                                 st.member_seq);
      },
  };
}

} // namespace

size_t shard_of(const std::string& key, size_t count) {
  // FNV-1a: stable across processes and builds, unlike std::hash.
  uint64_t h = 1469598103934665603ULL;
  for (unsigned char c : key) {
    h ^= c;
    h *= 1099511628211ULL;
  }
  return count == 0 ? 0 : static_cast<size_t>(h % count);
}

result<caf::actor> spawn_gcs_shard(caf::actor_system& sys, gcs_shard_config cfg) {
  std::shared_ptr<gcs_log::recovery> recovered;
  if (!cfg.dir.empty()) {
    auto r = gcs_log::open(cfg.dir, cfg.index, cfg.count, cfg.log);
    if (!r) return r.err();
    for (auto& w : r->warnings)
      note(cfg, log_level::warn, w);
    recovered = std::make_shared<gcs_log::recovery>(std::move(*r));
  }
  return sys.spawn(gcs_shard, std::move(cfg), std::move(recovered));
}

} // namespace swarm::actors
