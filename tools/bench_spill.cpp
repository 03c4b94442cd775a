// Spilling: objects moved to disk by a full store and read back, beside a plain
// sequential write and read of the same bytes to the same folder in the same run. Both
// go through the page cache without fsync (as `dd bs=50M` without conv=fsync does):
// spilling makes no object durable, so it does not wait for the disk either.

#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <vector>

#include "framework/swarm.hpp"
#include "tools/bench_local.hpp"
#include "tools/bench_stats.hpp"

namespace swarm::tools {

namespace {

namespace fs = std::filesystem;

constexpr size_t object_bytes = size_t{50} << 20;

// A folder of its own under the system's temporary one, removed at the end.
struct bench_folder {
  fs::path path;
  bench_folder() {
    auto tmpl = (fs::temp_directory_path() / "swarm-bench-spill-XXXXXX").string();
    check(::mkdtemp(tmpl.data()) != nullptr, "making a folder for the spill benchmark");
    path = tmpl;
  }
  ~bench_folder() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

// GB/s of `n` objects' bytes moved by `io` (read or write) between `buffer` and the
// file `file` opened with `flags`, an object per call (as a spill writes one and a
// restore reads one).
template <class Io>
double plain_file_pass(const std::string& file, int flags, std::vector<char>& buffer,
                       size_t n, Io io, const char* what) {
  int fd = ::open(file.c_str(), flags, 0600);
  check(fd >= 0, what);
  auto t0 = bench_clock::now();
  for (size_t i = 0; i < n; ++i)
    for (size_t at = 0; at < object_bytes;) {
      auto done = io(fd, buffer.data() + at, object_bytes - at);
      check(done > 0, what);
      at += static_cast<size_t>(done);
    }
  double gbps = static_cast<double>(n * object_bytes) / seconds_since(t0) / 1e9;
  ::close(fd);
  return gbps;
}

// GB/s of writing `n` objects' bytes to one file in `dir`, then of reading them back.
std::pair<double, double> plain_file_gigabytes(const fs::path& dir, size_t n) {
  std::vector<char> buffer(object_bytes, 'd');
  auto file = (dir / "plain").string();
  double write = plain_file_pass(
      file, O_WRONLY | O_CREAT | O_TRUNC, buffer, n,
      [](int fd, char* p, size_t k) { return ::write(fd, p, k); },
      "writing the plain file");
  double read = plain_file_pass(
      file, O_RDONLY, buffer, n,
      [](int fd, char* p, size_t k) { return ::read(fd, p, k); },
      "reading the plain file");
  fs::remove(file);
  return {write, read};
}

// GB/s of spilling `n` objects through a store that holds two, then of reading back
// those whose restore writes nothing (the first two restores spill the two objects that
// were never on disk).
std::pair<double, double> spill_gigabytes(const fs::path& dir, size_t n) {
  application app;
  runtime_config cfg;
  cfg.object_store_bytes = 2 * object_bytes + (object_bytes / 2);
  cfg.object_pool_bytes = object_bytes + (object_bytes / 4); // one freed value's memory
  cfg.spill_dir = dir.string();
  runtime rt{app, cfg};
  std::vector<std::vector<char>> values;
  for (size_t i = 0; i < n; ++i)
    values.emplace_back(object_bytes, static_cast<char>('a' + i % 26));
  std::vector<object_ref<std::vector<char>>> refs;
  auto t0 = bench_clock::now();
  for (auto& v : values)
    refs.push_back(rt.put(std::move(v))); // moved in: each put past two spills one
  double spilled_s = seconds_since(t0);
  auto spills = rt.stats().spills;
  check(spills == n - 2, "spilling (not every put past the store's room spilled one)");
  for (size_t i = 0; i < 2; ++i)
    check((*refs[i].get_shared().value())[0] == static_cast<char>('a' + i % 26),
          "restoring");
  t0 = bench_clock::now();
  for (size_t i = 2; i < n - 2; ++i)
    check((*refs[i].get_shared().value())[object_bytes - 1] ==
              static_cast<char>('a' + i % 26),
          "restoring");
  double restored_s = seconds_since(t0);
  return {static_cast<double>(spills * object_bytes) / spilled_s / 1e9,
          static_cast<double>((n - 4) * object_bytes) / restored_s / 1e9};
}

} // namespace

void measure_spilling(bench_session& s) {
  if (!s.wants("spill_gigabytes") && !s.wants("restore_gigabytes")) return;
  auto& p = s.plan();
  size_t n = p.big_ops * 2; // 50 MB each: 400 MB quick, 1 GB in full
  bench_folder dir;
  std::vector<double> writes, reads, spills, restores;
  for (int r = 0; r < std::min(p.reps, 3); ++r) {
    auto [sp, rs] = spill_gigabytes(dir.path, n);
    auto [w, rd] = plain_file_gigabytes(dir.path, n);
    writes.push_back(w);
    reads.push_back(rd);
    spills.push_back(sp);
    restores.push_back(rs);
  }
  double write_floor =
      s.floor("file_write_gigabytes", "GB/s", [&] { return median(writes); });
  double read_floor =
      s.floor("file_read_gigabytes", "GB/s", [&] { return median(reads); });
  if (s.wants("spill_gigabytes"))
    s.add(versus("spill_gigabytes", median(spills), "GB/s", "file_write_gigabytes",
                 write_floor));
  if (s.wants("restore_gigabytes"))
    s.add(versus("restore_gigabytes", median(restores), "GB/s", "file_read_gigabytes",
                 read_floor));
}

} // namespace swarm::tools
