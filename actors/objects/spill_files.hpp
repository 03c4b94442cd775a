#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>

#include "base/private_dir.hpp"
#include "base/result.hpp"
#include "framework/detail/object_slot.hpp"
#include "framework/detail/type_descriptor.hpp"
#include "framework/object_id.hpp"

namespace swarm::detail {
class value_pool;
} // namespace swarm::detail

namespace swarm::actors {

/// Where a node's object store spills objects.
struct spill_config {
  /// The folder the node's own spill folder goes in; empty: the system's temporary one.
  std::string parent;
  /// The node's name, in its spill folder's name.
  std::string node;
  /// Bytes that may be spilled at once; 0: as many as the disk holds.
  uint64_t limit = 0;
  /// The node that reads spilled values back (the actor handles in them); may be null.
  codec_context* values = nullptr;
};

/// A node's spilled objects, one file each in a folder of this node process's own,
/// `<parent>/swarm-spill-<node>-<pid>-XXXXXX`, made private (mkdtemp, mode 0700) at the
/// first spill and removed with everything in it when this goes. Files are created new
/// (O_EXCL, O_NOFOLLOW, mode 0600), and each carries its object's id and an XXH3-64 of
/// its bytes, checked when it is read back: a file swapped, cut or changed reads as
/// `object_lost`, never as wrong bytes. Folders of node processes that are gone
/// (crashed) are removed at the first spill. Thread-safe for different objects.
class spill_files {
public:
  explicit spill_files(spill_config cfg);
  ~spill_files();

  spill_files(const spill_files&) = delete;
  spill_files& operator=(const spill_files&) = delete;

  /// Writes `value` as object `id`'s file; an error (nothing left behind) when the disk
  /// or the limit has no room, or the folder cannot be made.
  result<void> write(const object_id& id, const detail::boxed_value& value);

  /// Reads object `id` back as a `type`, its buffers made in memory `pool` keeps (if
  /// any).
  result<detail::boxed_value> read(const object_id& id,
                                   const detail::type_descriptor& type,
                                   detail::value_pool* pool) const;

  /// Removes object `id`'s file.
  void remove(const object_id& id);

  /// Bytes in spill files now.
  uint64_t bytes() const noexcept { return bytes_.load(std::memory_order_relaxed); }

  /// Where the files go, for messages: the folder's pattern (it is made at the first
  /// spill, its last six letters chosen then).
  const std::string& folder() const noexcept { return folder_; }

  /// The limit, as configured (0: none).
  uint64_t limit() const noexcept { return cfg_.limit; }

private:
  std::string path_of(const object_id& id) const;
  result<void> make_folder();

  spill_config cfg_;
  std::string parent_;
  std::string prefix_;
  std::string folder_;
  std::once_flag made_;
  std::optional<private_dir> dir_;
  std::optional<error> make_error_;
  std::atomic<uint64_t> bytes_{0};
};

} // namespace swarm::actors
