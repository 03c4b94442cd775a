#include "actors/control_store/gcs_log.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace swarm::actors {

namespace {

// File header: magic, format version, shard index, shard count (u32 each, LE). A
// snapshot's header also holds its row count (u64).
constexpr char log_magic[8] = {'S', 'W', 'G', 'C', 'S', 'L', 'O', 'G'};
constexpr char snapshot_magic[8] = {'S', 'W', 'G', 'C', 'S', 'S', 'N', 'P'};
constexpr uint32_t format_version = 1;
constexpr size_t log_header_bytes = 8 + 4 * 3;
constexpr size_t snapshot_header_bytes = log_header_bytes + 8;

error io_error(const std::string& what) {
  return {errc::io_error, what + ": " + std::strerror(errno)};
}

error damaged(const std::string& path, uint64_t offset, const std::string& why) {
  return {errc::invalid_argument, "control-store file '" + path +
                                      "' is damaged at byte " + std::to_string(offset) +
                                      ": " + why};
}

std::vector<uint8_t> header(const char (&magic)[8], size_t index, size_t count) {
  std::vector<uint8_t> out(magic, magic + 8);
  put_le(out, format_version, 4);
  put_le(out, index, 4);
  put_le(out, count, 4);
  return out;
}

// Checks a header written by `header` for this shard.
result<void> check_header(const std::string& path, const std::vector<uint8_t>& bytes,
                          const char (&magic)[8], size_t index, size_t count) {
  if (std::memcmp(bytes.data(), magic, 8) != 0)
    return damaged(path, 0, "not a swarm control-store file (wrong magic)");
  if (auto v = get_le(bytes.data() + 8, 4); v != format_version)
    return damaged(path, 8,
                   "format version " + std::to_string(v) + ", this build reads " +
                       std::to_string(format_version));
  auto i = get_le(bytes.data() + 12, 4), n = get_le(bytes.data() + 16, 4);
  if (i != index || n != count)
    return error{errc::invalid_argument,
                 "control-store file '" + path + "' belongs to shard " +
                     std::to_string(i) + " of " + std::to_string(n) +
                     ", but this node runs shard " + std::to_string(index) + " of " +
                     std::to_string(count) + ": set gcs_shards back to " +
                     std::to_string(n) + " or move the directory away"};
  return {};
}

result<void> write_all(int fd, const uint8_t* p, size_t n, const std::string& path) {
  while (n > 0) {
    auto w = ::write(fd, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w < 0) return io_error("cannot write '" + path + "'");
    p += w;
    n -= static_cast<size_t>(w);
  }
  return {};
}

// The whole file, or nothing when it does not exist.
result<std::optional<std::vector<uint8_t>>> read_all(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) return std::optional<std::vector<uint8_t>>{};
    return io_error("cannot open '" + path + "'");
  }
  std::vector<uint8_t> out;
  uint8_t buf[1 << 16];
  for (;;) {
    auto r = ::read(fd, buf, sizeof(buf));
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) {
      auto e = io_error("cannot read '" + path + "'");
      ::close(fd);
      return e;
    }
    if (r == 0) break;
    out.insert(out.end(), buf, buf + r);
  }
  ::close(fd);
  return std::optional<std::vector<uint8_t>>{std::move(out)};
}

result<void> sync_dir(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return io_error("cannot open directory '" + path + "'");
  bool ok = ::fsync(fd) == 0;
  auto e = ok ? error{} : io_error("cannot sync directory '" + path + "'");
  ::close(fd);
  if (!ok) return e;
  return {};
}

// The directory holding `path` ("." for a bare name).
std::string parent_of(const std::string& path) {
  auto slash = path.find_last_of('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

// mkdir -p; every directory it makes is synced into its parent.
result<void> make_dirs(const std::string& path) {
  for (size_t pos = 0; pos != std::string::npos;) {
    pos = path.find('/', pos + 1);
    auto part = path.substr(0, pos);
    if (::mkdir(part.c_str(), 0755) == 0) {
      if (auto ok = sync_dir(parent_of(part)); !ok) return ok;
    } else if (errno != EEXIST) {
      return io_error("cannot create directory '" + part + "'");
    }
  }
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
    return error{errc::io_error, "'" + path + "' exists but is not a directory"};
  return {};
}

// Replays the records of `bytes` from `at` into `tables`; the offset after the last
// whole record. A torn tail is a warning when `tolerate_torn`, else damage.
result<size_t> replay(const std::string& path, const std::vector<uint8_t>& bytes,
                      size_t at, row_tables& tables, size_t& records, bool tolerate_torn,
                      std::vector<std::string>& warnings) {
  for (;;) {
    auto f = next_frame(bytes.data(), bytes.size(), at);
    switch (f.what) {
    case frame_at::kind::end:
      return at;
    case frame_at::kind::torn:
      if (!tolerate_torn) return damaged(path, at, f.why);
      warnings.push_back("control-store log '" + path + "': dropped " +
                         std::to_string(bytes.size() - at) + " byte(s) at byte " +
                         std::to_string(at) + " (" + f.why +
                         "; a write cut short by a crash, never acknowledged)");
      return at;
    case frame_at::kind::damaged:
      return damaged(path, at, f.why);
    case frame_at::kind::record:
      break;
    }
    auto rec = decode_record(f.payload, f.size);
    if (!rec) return damaged(path, at, rec.err().message);
    apply_record(tables, *rec);
    ++records;
    at = f.next;
  }
}

} // namespace

gcs_log::gcs_log(std::string dir, size_t index, size_t count, gcs_log_options opts)
    : dir_(std::move(dir)), index_(index), count_(count), opts_(opts),
      next_snapshot_at_(opts.snapshot_every) {}

gcs_log::gcs_log(gcs_log&& other) noexcept
    : dir_(std::move(other.dir_)), index_(other.index_), count_(other.count_),
      opts_(other.opts_), fd_(other.fd_), size_(other.size_), records_(other.records_),
      next_snapshot_at_(other.next_snapshot_at_), broken_(other.broken_) {
  other.fd_ = -1;
}

gcs_log& gcs_log::operator=(gcs_log&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    dir_ = std::move(other.dir_);
    index_ = other.index_;
    count_ = other.count_;
    opts_ = other.opts_;
    fd_ = other.fd_;
    size_ = other.size_;
    records_ = other.records_;
    next_snapshot_at_ = other.next_snapshot_at_;
    broken_ = other.broken_;
    other.fd_ = -1;
  }
  return *this;
}

gcs_log::~gcs_log() {
  if (fd_ >= 0) ::close(fd_);
}

result<gcs_log::recovery> gcs_log::open(const std::string& dir, size_t index,
                                        size_t count, gcs_log_options opts) {
  if (dir.empty()) return error{errc::invalid_argument, "gcs_log: empty directory"};
  if (count == 0 || index >= count)
    return error{errc::invalid_argument, "gcs_log: shard " + std::to_string(index) +
                                             " of " + std::to_string(count)};
  if (opts.snapshot_every == 0)
    return error{errc::invalid_argument, "gcs_log: snapshot_every must be positive"};
  auto shard_dir = dir + "/shard-" + std::to_string(index);
  if (auto ok = make_dirs(shard_dir); !ok) return ok.err();
  recovery out{gcs_log{shard_dir, index, count, opts}, {}, {}};
  auto& log = out.log;

  // A snapshot cut short by a crash was never renamed into place: it holds nothing new.
  auto tmp = shard_dir + "/snapshot.tmp";
  if (::unlink(tmp.c_str()) == 0)
    out.warnings.push_back("removed '" + tmp + "', a snapshot a crash left unfinished");
  else if (errno != ENOENT)
    return io_error("cannot remove '" + tmp + "'");

  auto snap_path = shard_dir + "/snapshot";
  auto snap = read_all(snap_path);
  if (!snap) return snap.err();
  if (*snap) {
    auto& bytes = **snap;
    if (bytes.size() < snapshot_header_bytes)
      return damaged(snap_path, 0, "shorter than its header");
    if (auto ok = check_header(snap_path, bytes, snapshot_magic, index, count); !ok)
      return ok.err();
    auto expected = get_le(bytes.data() + log_header_bytes, 8);
    size_t rows = 0;
    auto end = replay(snap_path, bytes, snapshot_header_bytes, out.tables, rows, false,
                      out.warnings);
    if (!end) return end.err();
    if (rows != expected)
      return damaged(snap_path, *end,
                     "holds " + std::to_string(rows) + " rows, its header says " +
                         std::to_string(expected));
  }

  // Records of the log may already be in the snapshot (a crash between the snapshot's
  // rename and the log's reset): replaying them again yields the same tables, since a
  // record sets or removes a whole row.
  auto log_path = shard_dir + "/log";
  auto bytes = read_all(log_path);
  if (!bytes) return bytes.err();
  uint64_t valid = 0;
  if (*bytes && (*bytes)->size() >= log_header_bytes) {
    if (auto ok = check_header(log_path, **bytes, log_magic, index, count); !ok)
      return ok.err();
    auto end = replay(log_path, **bytes, log_header_bytes, out.tables, log.records_, true,
                      out.warnings);
    if (!end) return end.err();
    valid = *end;
  } else if (*bytes && !(*bytes)->empty()) {
    // The header goes down in one write before any record: a short file holds none.
    out.warnings.push_back("control-store log '" + log_path + "': rewrote a header cut " +
                           "short by a crash (" + std::to_string((*bytes)->size()) +
                           " bytes)");
  }
  if (auto ok = log.open_log_for_append(valid); !ok) return ok.err();
  return out;
}

result<void> gcs_log::open_log_for_append(uint64_t valid_bytes) {
  auto path = dir_ + "/log";
  fd_ = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd_ < 0) return io_error("cannot open '" + path + "' for writing");
  if (auto ok = sync_dir(dir_); !ok) return ok;
  if (valid_bytes < log_header_bytes) return reset_log();
  // Drops a torn tail, so the next record follows the last whole one.
  if (::ftruncate(fd_, static_cast<off_t>(valid_bytes)) != 0 || ::fsync(fd_) != 0)
    return io_error("cannot cut '" + path + "' back to its last whole record");
  size_ = valid_bytes;
  return {};
}

result<void> gcs_log::reset_log() {
  auto path = dir_ + "/log";
  if (size_ >= log_header_bytes) {
    // Keeps the header: one truncation, nothing to rewrite.
    if (::ftruncate(fd_, static_cast<off_t>(log_header_bytes)) != 0)
      return io_error("cannot empty '" + path + "'");
  } else {
    // A new or short file: the header goes down in one write before any record.
    broken_ = true;
    if (::ftruncate(fd_, 0) != 0) return io_error("cannot empty '" + path + "'");
    auto head = header(log_magic, index_, count_);
    if (auto ok = write_all(fd_, head.data(), head.size(), path); !ok) return ok;
  }
  if (::fsync(fd_) != 0) return io_error("cannot sync '" + path + "'");
  size_ = log_header_bytes;
  records_ = 0;
  broken_ = false;
  return {};
}

result<void> gcs_log::append(const gcs_record& rec) {
  if (auto ok = check_record(rec); !ok) return ok;
  auto path = dir_ + "/log";
  if (broken_)
    return error{errc::io_error, "'" + path + "' could not be cut back after an " +
                                     "earlier failed write; no further writes until a " +
                                     "snapshot or a restart repairs it"};
  auto frame = encode_record(rec);
  auto ok = write_all(fd_, frame.data(), frame.size(), path);
  if (ok && ::fdatasync(fd_) != 0) ok = io_error("cannot sync '" + path + "'");
  if (!ok) {
    // What reached the file of this record must go, or later records follow garbage.
    if (::ftruncate(fd_, static_cast<off_t>(size_)) != 0) broken_ = true;
    return ok;
  }
  size_ += frame.size();
  ++records_;
  return {};
}

result<void> gcs_log::snapshot(const row_tables& tables) {
  auto tmp = dir_ + "/snapshot.tmp";
  auto path = dir_ + "/snapshot";
  auto fail = [&](error e) {
    ::unlink(tmp.c_str());
    next_snapshot_at_ = records_ + opts_.snapshot_every;
    return e;
  };
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return fail(io_error("cannot create '" + tmp + "'"));
  uint64_t rows = 0;
  for (auto& [name, t] : tables)
    rows += t.size();
  auto buf = header(snapshot_magic, index_, count_);
  put_le(buf, rows, 8);
  result<void> ok;
  for (auto& [name, t] : tables) {
    for (auto& [key, row] : t) {
      auto frame = encode_record({name, key, row});
      buf.insert(buf.end(), frame.begin(), frame.end());
      if (buf.size() >= (1u << 20)) {
        if (ok = write_all(fd, buf.data(), buf.size(), tmp); !ok) break;
        buf.clear();
      }
    }
    if (!ok) break;
  }
  if (ok) ok = write_all(fd, buf.data(), buf.size(), tmp);
  if (ok && ::fsync(fd) != 0) ok = io_error("cannot sync '" + tmp + "'");
  ::close(fd);
  if (!ok) return fail(ok.err());
  if (::rename(tmp.c_str(), path.c_str()) != 0)
    return fail(io_error("cannot rename '" + tmp + "' to '" + path + "'"));
  // From here the new snapshot holds everything; the log's records are redundant.
  if (auto synced = sync_dir(dir_); !synced) return fail(synced.err());
  if (auto reset = reset_log(); !reset) return fail(reset.err());
  next_snapshot_at_ = opts_.snapshot_every;
  return {};
}

} // namespace swarm::actors
