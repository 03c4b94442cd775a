#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "actors/control_store/gcs_record.hpp"
#include "actors/control_store/table_row.hpp"
#include "base/result.hpp"

namespace swarm::actors {

/// How a `gcs_log` behaves.
struct gcs_log_options {
  /// Records in the log before the next append folds the tables into a new snapshot.
  size_t snapshot_every = 4096;
};

/// The durable store of one control-store shard: an append-only log of writes plus a
/// snapshot of the tables, in `<dir>/shard-<index>/` (files `log` and `snapshot`).
///
/// Both files are a header (magic, format version, shard index, shard count) followed by
/// records framed by `encode_record`; the header makes a store written with another
/// `gcs_shards` an error instead of rows routed to the wrong shard.
///
/// A resource: one owner, not copyable; used from one thread (the shard actor) at a
/// time. Every call blocks on the disk.
class gcs_log {
public:
  /// What `open` recovered.
  struct recovery;

  /// Creates the shard's directory when it is missing, replays the snapshot and then the
  /// log, and returns the tables with the log opened for appends. A record cut short at
  /// the end of the log (a crash mid-write) is dropped and reported in `warnings`; any
  /// other damage (a bad checksum before the end, an unknown table, a foreign header) is
  /// an error naming the file and the byte offset, and nothing is dropped.
  static result<recovery> open(const std::string& dir, size_t index, size_t count,
                               gcs_log_options opts = {});

  gcs_log(gcs_log&& other) noexcept;
  gcs_log& operator=(gcs_log&& other) noexcept;
  gcs_log(const gcs_log&) = delete;
  gcs_log& operator=(const gcs_log&) = delete;
  ~gcs_log();

  /// Writes `rec` to the log and returns once it is on disk (fdatasync). On an error
  /// the log is cut back to its last whole record, so the store stays readable; the
  /// caller must not apply a record whose append failed.
  result<void> append(const gcs_record& rec);

  /// True once the log holds `snapshot_every` records since the last snapshot (or since
  /// the last failed attempt at one).
  bool snapshot_due() const noexcept { return records_ >= next_snapshot_at_; }

  /// Writes `tables` (which must hold every appended record) as the new snapshot: a
  /// temporary file, fsync, rename over the old snapshot, fsync of the directory, then
  /// an empty log. On an error the old snapshot and the log are still valid; the next
  /// attempt is `snapshot_every` records later.
  result<void> snapshot(const row_tables& tables);

  /// Records in the log since the last snapshot.
  size_t log_records() const noexcept { return records_; }

  /// The shard's directory.
  const std::string& dir() const noexcept { return dir_; }

private:
  gcs_log(std::string dir, size_t index, size_t count, gcs_log_options opts);

  result<void> open_log_for_append(uint64_t valid_bytes);
  result<void> reset_log();

  std::string dir_;
  size_t index_;
  size_t count_;
  gcs_log_options opts_;
  int fd_ = -1;
  uint64_t size_ = 0; // bytes of whole records (and the header) in the log
  size_t records_ = 0;
  size_t next_snapshot_at_ = 0;
  bool broken_ = false; // a failed write could not be cut back: refuse appends
};

struct gcs_log::recovery {
  gcs_log log;
  row_tables tables;
  /// What was repaired on the way, e.g. a torn last record dropped (file and offset).
  std::vector<std::string> warnings;
};

} // namespace swarm::actors
