#include "actors/gcs_shard.hpp"

#include <caf/all.hpp>

#include <cstdio>
#include <memory>
#include <optional>

#include "actors/messages.hpp"

namespace swarm::actors {

namespace {

struct gcs_state {
  gcs_shard_config config;
  // Live pointers into this process: they mean nothing after a restart, so they are
  // never persisted (a restarted node's actors register their names again).
  std::map<std::string, detail::actor_record_ptr> named_actors;
  row_tables tables;
  // With `config.dir`: every write is on disk before it applies.
  std::optional<gcs_log> log;
  size_t failed_writes = 0; // since the last write the disk took

  bool owns(const std::string& key) const {
    return shard_of(key, config.count) == config.index;
  }
};

caf::error not_found(const std::string& what) {
  return caf::make_error(caf::sec::runtime_error, what);
}

// Appends `rec` (when persisting), then applies it. A refused write is not applied: the
// tables never hold what the disk does not.
// TODO(perf): one fdatasync per write, on this actor's thread; heartbeats rewrite node
// rows often. Group commit (sync once per drained mailbox) would batch them.
caf::result<void> persist_and_apply(gcs_state& st, const gcs_record& rec) {
  auto index = st.config.index;
  if (st.log) {
    if (auto ok = st.log->append(rec); !ok) {
      // Logged on the first failure and every 100th after: heartbeats write often.
      if (st.failed_writes++ % 100 == 0)
        std::fprintf(stderr,
                     "swarm: gcs shard %zu: write of '%s/%s' refused (%zu so far): %s\n",
                     index, rec.table.c_str(), rec.key.c_str(), st.failed_writes,
                     ok.err().to_string().c_str());
      return caf::make_error(caf::sec::runtime_error,
                             "control store write not persisted: " +
                                 ok.err().to_string());
    }
    if (st.failed_writes > 0) {
      std::fprintf(stderr,
                   "swarm: gcs shard %zu: writes persist again after %zu refused\n",
                   index, st.failed_writes);
      st.failed_writes = 0;
    }
  }
  apply_record(st.tables, rec);
  // The write is durable in the log either way; a failed snapshot is retried later.
  if (st.log && st.log->snapshot_due())
    if (auto ok = st.log->snapshot(st.tables); !ok)
      std::fprintf(stderr,
                   "swarm: gcs shard %zu: snapshot failed, the log keeps growing: %s\n",
                   index, ok.err().to_string().c_str());
  return caf::unit;
}

caf::behavior gcs_shard(caf::stateful_actor<gcs_state>* self, gcs_shard_config cfg,
                        std::shared_ptr<gcs_log::recovery> recovered) {
  self->state.config = std::move(cfg);
  if (recovered) {
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
        return persist_and_apply(self->state, {table, key, std::move(row)});
      },
      [self](erase_atom, const std::string& table,
             const std::string& key) -> caf::result<void> {
        auto& tables = self->state.tables;
        auto t = tables.find(table);
        if (t == tables.end() || t->second.count(key) == 0) return caf::unit;
        return persist_and_apply(self->state, {table, key, std::nullopt});
      },
      [self](get_atom, const std::string& table,
             const std::string& key) -> caf::result<table_row> {
        auto& t = self->state.tables[table];
        auto i = t.find(key);
        if (i == t.end()) return not_found("no row '" + key + "' in table '" + table + "'");
        return i->second;
      },
      [self](scan_atom, const std::string& table) {
        std::vector<table_row> rows;
        if (auto t = self->state.tables.find(table); t != self->state.tables.end())
          for (auto& [k, row] : t->second)
            rows.push_back(row);
        return rows;
      },
      [self](stats_atom) {
        size_t rows = 0;
        for (auto& [name, t] : self->state.tables)
          rows += t.size();
        return caf::make_message(self->state.config.functions.size(),
                                 self->state.named_actors.size(), rows);
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
      std::fprintf(stderr, "swarm: gcs shard %zu: %s\n", cfg.index, w.c_str());
    recovered = std::make_shared<gcs_log::recovery>(std::move(*r));
  }
  return sys.spawn(gcs_shard, std::move(cfg), std::move(recovered));
}

} // namespace swarm::actors
