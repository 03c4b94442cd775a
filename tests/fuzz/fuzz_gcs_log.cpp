// Fuzzes the recovery of a control-store shard (actors/gcs_log.hpp) from damaged files.
//
// Once per process a valid store is written through gcs_log: a snapshot of five rows
// and a log of six records after it. Each input then damages a copy of it and opens it.
// Input: a mode byte (bits 0-1: truncate, overwrite, append, or replace one record's
// payload and fix its checksums; bit 7: the snapshot instead of the log), a
// little-endian u32 (the length, offset or record index, taken modulo what fits), then
// the bytes to write.
//
// Checked: open never crashes or throws, it returns an error or tables; a store it
// recovered opens again to the same tables without warnings; a log cut anywhere recovers
// exactly the records before the cut (with a warning unless the cut is between
// records); a snapshot cut anywhere is an error.
//
// The store lives under $SWARM_FUZZ_TMPDIR, else /dev/shm, else $TMPDIR or /tmp (every
// open syncs files, which costs little on a RAM file system), and is removed at exit.

#include <fcntl.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "actors/control_store/gcs_log.hpp"
#include "actors/control_store/gcs_record.hpp"

namespace {

using namespace swarm::actors;
namespace wire = swarm::wire_msg;

constexpr size_t shard_index = 1;
constexpr size_t shard_count = 3;

void check(bool ok, const char* what) {
  if (ok) return;
  std::fprintf(stderr, "fuzz_gcs_log: invariant broken: %s\n", what);
  std::abort();
}

gcs_record node_row(const std::string& name, uint16_t port) {
  wire::node_info n;
  n.name = name;
  n.address = "127.0.0.1";
  n.port = port;
  n.total = {{"CPU", 4}, {"GPU", 1}};
  n.available = {{"CPU", 2.5}};
  return {"node", name, n};
}

gcs_record job_row(uint64_t id, bool running) {
  wire::job_info j;
  j.id = id;
  j.driver = "head";
  j.pid = 4242;
  j.running = running;
  return {"job", std::to_string(id), j};
}

gcs_record object_row(uint64_t seq) {
  return {"object", "3:" + std::to_string(seq),
          wire::object_location{{3, seq}, "worker-1", 1u << 20, true}};
}

gcs_record kv_row(const std::string& key, std::vector<uint8_t> value) {
  return {"kv", key, wire::kv_entry{key, std::move(value)}};
}

// The tables as bytes, to compare them (rows have no operator==).
std::vector<uint8_t> bytes_of(const row_tables& tables) {
  std::vector<uint8_t> out;
  for (auto& [name, rows] : tables)
    for (auto& [key, row] : rows) {
      auto r = encode_record({name, key, row});
      out.insert(out.end(), r.begin(), r.end());
    }
  return out;
}

std::vector<uint8_t> read_file(const std::string& path) {
  std::vector<uint8_t> out;
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  check(fd >= 0, "cannot read the store written at start-up");
  uint8_t buf[4096];
  for (ssize_t n; (n = ::read(fd, buf, sizeof buf)) > 0;)
    out.insert(out.end(), buf, buf + n);
  ::close(fd);
  return out;
}

void write_file(const std::string& path, const std::vector<uint8_t>& bytes) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  check(fd >= 0, "cannot write the store");
  check(::write(fd, bytes.data(), bytes.size()) == static_cast<ssize_t>(bytes.size()),
        "cannot write the store");
  ::close(fd);
}

std::string temp_base() {
  if (auto* d = std::getenv("SWARM_FUZZ_TMPDIR")) return d;
  if (::access("/dev/shm", W_OK) == 0) return "/dev/shm";
  if (auto* d = std::getenv("TMPDIR")) return d;
  return "/tmp";
}

// The valid store and what each prefix of its log recovers.
struct store {
  std::string dir;
  std::string log_path;
  std::string snapshot_path;
  std::vector<uint8_t> log;
  std::vector<uint8_t> snapshot;
  // Offsets in `log` where a record ends; the first is the end of the header.
  std::vector<size_t> log_ends;
  // Offsets in `snapshot` where a record ends, the first the end of its header.
  std::vector<size_t> snapshot_ends;
  // states[k]: the tables after the snapshot and the first k log records.
  std::vector<std::vector<uint8_t>> states;

  store() {
    std::string tmpl = temp_base() + "/swarm-fuzz-gcs-log-XXXXXX";
    check(::mkdtemp(tmpl.data()) != nullptr, "cannot create a temporary directory");
    dir = tmpl;
    std::vector<gcs_record> before = {node_row("head", 7100), node_row("worker-1", 7101),
                                      job_row(1, true), object_row(12),
                                      kv_row("model", {1, 2, 3})};
    std::vector<gcs_record> after = {job_row(1, false),
                                     {"object", "3:12", std::nullopt},
                                     kv_row("", {}),
                                     node_row("worker-2", 7102),
                                     {"kv", "missing", std::nullopt},
                                     kv_row("model", std::vector<uint8_t>(40, 0xab))};
    row_tables tables;
    {
      auto opened = gcs_log::open(dir, shard_index, shard_count, {1000});
      check(static_cast<bool>(opened), "cannot create the store");
      for (auto& r : before) {
        check(static_cast<bool>(opened->log.append(r)), "cannot append");
        apply_record(tables, r);
      }
      check(static_cast<bool>(opened->log.snapshot(tables)), "cannot snapshot");
      states.push_back(bytes_of(tables));
      for (auto& r : after) {
        check(static_cast<bool>(opened->log.append(r)), "cannot append");
        apply_record(tables, r);
        states.push_back(bytes_of(tables));
      }
    }
    auto shard = dir + "/shard-" + std::to_string(shard_index);
    log_path = shard + "/log";
    snapshot_path = shard + "/snapshot";
    log = read_file(log_path);
    snapshot = read_file(snapshot_path);
    log_ends = ends_of(log, after);
    snapshot_ends = ends_of(snapshot, before);
  }

  ~store() {
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
  }

  // Where the header and each record of `file` end, given the records it holds.
  static std::vector<size_t> ends_of(const std::vector<uint8_t>& file,
                                     const std::vector<gcs_record>& records) {
    size_t at = file.size();
    for (auto& r : records)
      at -= encode_record(r).size();
    std::vector<size_t> ends{at};
    while (at < file.size()) {
      auto f = next_frame(file.data(), file.size(), at);
      check(f.what == frame_at::kind::record, "the store written at start-up is damaged");
      ends.push_back(at = f.next);
    }
    check(ends.size() == records.size() + 1, "the store holds other records");
    return ends;
  }
};

store& the_store() {
  static store s;
  return s;
}

uint32_t u32_at(const uint8_t* p) {
  return static_cast<uint32_t>(get_le(p, 4));
}

// The same tables and no warnings when the store opens again.
void check_reopens_to(const std::vector<uint8_t>& tables) {
  auto again = gcs_log::open(the_store().dir, shard_index, shard_count, {1000});
  check(static_cast<bool>(again), "a recovered store does not open again");
  check(again->warnings.empty(), "a recovered store warns when opened again");
  check(bytes_of(again->tables) == tables, "a recovered store reopens to other tables");
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 5) return 0;
  auto& s = the_store();
  uint8_t mode = data[0] & 0x03;
  bool on_snapshot = (data[0] & 0x80) != 0;
  uint32_t param = u32_at(data + 1);
  std::vector<uint8_t> bytes(data + 5, data + size);

  auto log = s.log;
  auto snapshot = s.snapshot;
  auto& file = on_snapshot ? snapshot : log;
  auto& ends = on_snapshot ? s.snapshot_ends : s.log_ends;
  size_t cut = 0;
  switch (mode) {
  case 0: // truncate
    cut = param % (file.size() + 1);
    file.resize(cut);
    break;
  case 1: { // overwrite in place, growing the file if the bytes run past its end
    size_t at = param % (file.size() + 1);
    if (at + bytes.size() > file.size()) file.resize(at + bytes.size());
    std::copy(bytes.begin(), bytes.end(), file.begin() + static_cast<ptrdiff_t>(at));
    break;
  }
  case 2: // append
    file.insert(file.end(), bytes.begin(), bytes.end());
    break;
  case 3: { // replace one record's payload, with checksums that match it
    size_t i = param % (ends.size() - 1);
    std::vector<uint8_t> framed;
    put_le(framed, bytes.size(), 4);
    put_le(framed, crc32(framed.data(), 4), 4);
    put_le(framed, crc32(bytes.data(), bytes.size()), 4);
    framed.insert(framed.end(), bytes.begin(), bytes.end());
    std::vector<uint8_t> out(file.begin(),
                             file.begin() + static_cast<ptrdiff_t>(ends[i]));
    out.insert(out.end(), framed.begin(), framed.end());
    out.insert(out.end(), file.begin() + static_cast<ptrdiff_t>(ends[i + 1]), file.end());
    file = std::move(out);
    break;
  }
  }
  write_file(s.log_path, log);
  write_file(s.snapshot_path, snapshot);

  std::vector<uint8_t> tables;
  {
    auto opened = gcs_log::open(s.dir, shard_index, shard_count, {1000});
    if (mode == 0 && on_snapshot && cut < s.snapshot.size())
      check(!opened, "a cut snapshot opens");
    if (mode == 0 && !on_snapshot) {
      check(static_cast<bool>(opened), "a log cut short does not open");
      size_t k = 0;
      while (k + 1 < s.log_ends.size() && s.log_ends[k + 1] <= cut)
        ++k;
      check(bytes_of(opened->tables) == s.states[k],
            "a log cut short recovers other than the records before the cut");
      bool between = cut == 0;
      for (auto e : s.log_ends)
        between |= cut == e;
      check(
          opened->warnings.empty() == between,
          "a log cut inside a record gives no warning, or one cut between records does");
    }
    if (!opened) {
      check(!opened.err().message.empty(), "an error without a message");
      return 0;
    }
    tables = bytes_of(opened->tables);
  } // closes the log before it is opened again
  check_reopens_to(tables);
  return 0;
}
