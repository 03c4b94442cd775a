#include "actors/objects/spill_files.hpp"

#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <system_error>
#include <vector>

#define XXH_INLINE_ALL // header-only: no library to link, here or in a consumer
#include <xxhash.h>

#include "base/human_bytes.hpp"
#include "base/private_dir.hpp"
#include "framework/detail/ref_lender.hpp"

namespace swarm::actors {

namespace fs = std::filesystem;

namespace {

constexpr uint32_t file_magic = 0x50535753; // "SWSP"
constexpr uint32_t file_version = 2;
// Bytes summed and written (or read and summed) at a time: they stay in the cache.
constexpr size_t hash_slice = 256 << 10;

struct file_header {
  uint32_t magic = file_magic;
  uint32_t version = file_version;
  uint64_t total = 0; // bytes of the layout after the header
  // The object it holds, and XXH3-64 of the layout: a file swapped, cut or changed is
  // found out when it is read back.
  uint64_t owner = 0;
  uint64_t seq = 0;
  uint64_t checksum = 0;
};

// XXH3-64 over pieces given one after another.
class checksum {
public:
  checksum() { XXH3_64bits_reset(&state_); }
  void add(const void* p, size_t n) { XXH3_64bits_update(&state_, p, n); }
  uint64_t value() const { return XXH3_64bits_digest(&state_); }

private:
  XXH3_state_t state_;
};

// Closes a descriptor when it goes.
struct fd_guard {
  int fd;
  ~fd_guard() {
    if (fd >= 0) ::close(fd);
  }
};

// Writes every byte of `pieces` at the descriptor's position; errno's reason on failure.
result<void> write_all(int fd, std::vector<iovec> pieces) {
  size_t at = 0;
  while (at < pieces.size()) {
    auto n = ::writev(fd, pieces.data() + at,
                      static_cast<int>(std::min<size_t>(pieces.size() - at, IOV_MAX)));
    if (n < 0) {
      if (errno == EINTR) continue;
      return error{errc::store_full, std::strerror(errno)};
    }
    auto left = static_cast<size_t>(n);
    while (at < pieces.size() && left >= pieces[at].iov_len)
      left -= pieces[at++].iov_len;
    if (left > 0) {
      pieces[at].iov_base = static_cast<uint8_t*>(pieces[at].iov_base) + left;
      pieces[at].iov_len -= left;
    }
  }
  return {};
}

// Reads exactly `n` bytes into `into`; false at a short file or an error.
bool read_all(int fd, uint8_t* into, size_t n) {
  while (n > 0) {
    auto got = ::read(fd, into, n);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) return false;
    into += got;
    n -= static_cast<size_t>(got);
  }
  return true;
}

// Removes the spill folders under `parent` of `node`'s processes that are gone
// (`swarm-spill-<node>-<pid>-XXXXXX`, or without the suffix, as older builds named them).
void remove_orphans(const fs::path& parent, const std::string& node) {
  auto prefix = "swarm-spill-" + node + "-";
  std::error_code ec;
  for (auto& entry : fs::directory_iterator{parent, ec}) {
    auto name = entry.path().filename().string();
    if (name.rfind(prefix, 0) != 0) continue;
    auto pid_text = name.substr(prefix.size());
    pid_text = pid_text.substr(0, pid_text.find('-'));
    if (pid_text.empty() || pid_text.find_first_not_of("0123456789") != std::string::npos)
      continue;
    auto pid = static_cast<pid_t>(std::stol(pid_text));
    if (pid == ::getpid() || ::kill(pid, 0) == 0 || errno != ESRCH) continue;
    fs::remove_all(entry.path(), ec);
  }
}

} // namespace

spill_files::spill_files(spill_config cfg) : cfg_(std::move(cfg)) {
  std::error_code ec;
  parent_ = cfg_.parent.empty() ? fs::temp_directory_path(ec).string() : cfg_.parent;
  prefix_ = "swarm-spill-" + cfg_.node + "-" + std::to_string(::getpid()) + "-";
  folder_ = (fs::path{parent_} / (prefix_ + "XXXXXX")).string();
}

spill_files::~spill_files() = default; // the private folder goes with `dir_`

result<void> spill_files::make_folder() {
  std::call_once(made_, [this] {
    std::error_code ec;
    fs::create_directories(parent_, ec);
    if (!ec) remove_orphans(parent_, cfg_.node);
    auto dir = private_dir::make(parent_, prefix_);
    if (dir)
      dir_.emplace(std::move(*dir));
    else
      make_error_ = error{errc::store_full, "cannot make the spill folder " + folder_ +
                                                ": " + dir.err().message};
  });
  if (make_error_) return *make_error_;
  return {};
}

std::string spill_files::path_of(const object_id& id) const {
  return dir_->path() + "/" + id.to_string();
}

result<void> spill_files::write(const object_id& id, const detail::boxed_value& value) {
  if (auto ok = make_folder(); !ok) return ok;
  // The refs in a value on disk would keep nothing alive: such a value stays in memory.
  detail::ref_counter refs{nullptr};
  auto layout = value.type->lay_out(value.ptr.get(), &refs);
  if (refs.count() > 0)
    return error{errc::store_full, "object " + id.to_string() + " holds " +
                                       std::to_string(refs.count()) +
                                       " object ref(s) and is not spilled"};
  if (std::string why; !layout.fill(why))
    return error{errc::store_full,
                 "object " + id.to_string() + " is not spilled: " + why};
  file_header header;
  header.total = layout.size();
  header.owner = id.owner;
  header.seq = id.seq;
  auto bytes = sizeof header + header.total;
  if (cfg_.limit > 0 && bytes_.load(std::memory_order_relaxed) + bytes > cfg_.limit)
    return error{errc::store_full, "the spill limit (" + human_bytes(cfg_.limit) +
                                       ") is reached: " + human_bytes(this->bytes()) +
                                       " spilled in " + folder_};
  auto path = path_of(id);
  ::unlink(path.c_str()); // an earlier spill of it; the folder is this process's alone
  auto fd = create_private_file(path);
  if (!fd) return error{errc::store_full, fd.err().message};
  fd_guard guard{*fd};
  // Each slice is summed just before it is written, while it is in the cache; the
  // header, with the sum, goes last, over its place at the start.
  checksum sum;
  sum.add(layout.head.data(), layout.head.size());
  auto ok = write_all(
      *fd, {{&header, sizeof header}, {layout.head.data(), layout.head.size()}});
  for (auto& [data, size] : layout.blocks)
    for (size_t at = 0; ok && at < size; at += hash_slice) {
      auto n = std::min(hash_slice, size - at);
      sum.add(data + at, n);
      ok = write_all(*fd, {{const_cast<uint8_t*>(data + at), n}});
    }
  header.checksum = sum.value();
  if (ok &&
      ::pwrite(*fd, &header, sizeof header, 0) != static_cast<ssize_t>(sizeof header))
    ok = error{errc::store_full, std::strerror(errno)};
  if (!ok) {
    ::unlink(path.c_str());
    return error{errc::store_full, "cannot write " + path + " (" + human_bytes(bytes) +
                                       "): " + ok.err().message};
  }
  bytes_.fetch_add(bytes, std::memory_order_relaxed);
  return {};
}

result<detail::boxed_value> spill_files::read(const object_id& id,
                                              const detail::type_descriptor& type,
                                              detail::value_pool* pool) const {
  if (!dir_)
    return error{errc::object_lost, "object " + id.to_string() + " was never spilled"};
  auto path = path_of(id);
  auto fail = [&](const std::string& why) {
    return error{errc::object_lost, "cannot restore object " + id.to_string() +
                                        " from the spill file " + path + ": " + why};
  };
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) return fail(std::strerror(errno));
  fd_guard guard{fd};
  file_header header;
  if (!read_all(fd, reinterpret_cast<uint8_t*>(&header), sizeof header) ||
      header.magic != file_magic || header.version != file_version)
    return fail("not a spill file");
  if (header.owner != id.owner || header.seq != id.seq)
    return fail("it holds object " + object_id{header.owner, header.seq}.to_string());
  std::vector<uint8_t> head(std::min<uint64_t>(header.total, 16));
  if (!read_all(fd, head.data(), head.size())) return fail("cut short");
  bulk_head h;
  std::string why;
  auto state = read_bulk_head(head.data(), head.size(), header.total, h, why);
  if (state == bulk_head_state::incomplete) {
    auto had = head.size();
    head.resize(h.head_size);
    if (h.head_size < had || !read_all(fd, head.data() + had, h.head_size - had))
      return fail("cut short");
    state = read_bulk_head(head.data(), head.size(), header.total, h, why);
  }
  if (state != bulk_head_state::ready)
    return fail(why.empty() ? "a malformed head" : why);
  checksum sum;
  sum.add(head.data(), head.size());
  std::vector<std::pair<uint8_t*, size_t>> dests;
  auto value =
      type.decode_skeleton(head.data(), h, dests, why, pool, cfg_.values, nullptr);
  if (!value) return fail(why);
  for (auto& [dest, size] : dests)
    for (size_t at = 0; at < size; at += hash_slice) {
      auto n = std::min(hash_slice, size - at);
      if (!read_all(fd, dest + at, n)) return fail("cut short");
      sum.add(dest + at, n); // while it is in the cache
    }
  if (sum.value() != header.checksum)
    return fail("its bytes are not those written (checksum mismatch)");
  return detail::boxed_value{std::move(value), &type};
}

void spill_files::remove(const object_id& id) {
  if (!dir_) return;
  auto path = path_of(id);
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0 && ::unlink(path.c_str()) == 0)
    bytes_.fetch_sub(static_cast<uint64_t>(st.st_size), std::memory_order_relaxed);
}

} // namespace swarm::actors
