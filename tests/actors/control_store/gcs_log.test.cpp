#include <doctest/doctest.h>

#include <sys/resource.h>
#include <unistd.h>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "actors/control_store/gcs_log.hpp"
#include "actors/control_store/gcs_record.hpp"

using swarm::actors::gcs_log;
using swarm::actors::gcs_record;
using swarm::actors::row_tables;
namespace fs = std::filesystem;

namespace {

// A fresh directory, removed with everything in it at the end of the test.
struct temp_dir {
  std::string path;
  temp_dir() {
    char tmpl[] = "/tmp/swarm-gcs-log-test-XXXXXX";
    path = ::mkdtemp(tmpl);
  }
  ~temp_dir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
  std::string log() const { return path + "/shard-0/log"; }
  std::string snapshot() const { return path + "/shard-0/snapshot"; }
};

gcs_record node_row(const std::string& name, uint16_t port) {
  swarm::wire_msg::node_info n;
  n.name = name;
  n.address = "127.0.0.1";
  n.port = port;
  n.total = {{"CPU", 4}};
  return {"node", name, n};
}

gcs_record job_row(uint64_t id, bool running) {
  swarm::wire_msg::job_info j;
  j.id = id;
  j.driver = "head";
  j.running = running;
  return {"job", std::to_string(id), j};
}

gcs_record erase(const std::string& table, const std::string& key) {
  return {table, key, std::nullopt};
}

std::vector<uint8_t> read_bytes(const std::string& path) {
  std::ifstream in{path, std::ios::binary};
  return {std::istreambuf_iterator<char>{in}, {}};
}

void write_bytes(const std::string& path, const std::vector<uint8_t>& bytes) {
  std::ofstream out{path, std::ios::binary | std::ios::trunc};
  out.write(reinterpret_cast<const char*>(bytes.data()),
            static_cast<std::streamsize>(bytes.size()));
}

// Opens shard 0 of 1 and appends `records`, applying each as the shard does.
row_tables write_all(const std::string& dir, const std::vector<gcs_record>& records,
                     size_t snapshot_every = 4096) {
  auto opened = gcs_log::open(dir, 0, 1, {snapshot_every});
  REQUIRE(opened);
  auto& [log, tables, warnings] = *opened;
  CHECK(warnings.empty());
  for (auto& r : records) {
    REQUIRE(log.append(r));
    swarm::actors::apply_record(tables, r);
    if (log.snapshot_due()) REQUIRE(log.snapshot(tables));
  }
  return std::move(tables);
}

uint16_t port_of(const row_tables& t, const std::string& node) {
  return std::get<swarm::wire_msg::node_info>(t.at("node").at(node)).port;
}

} // namespace

TEST_CASE("a reopened store replays its snapshot and then its log") {
  temp_dir d;
  // Every third record folds the tables into a snapshot: 6 in snapshots, 2 in the log.
  auto written = write_all(d.path,
                           {node_row("head", 1), node_row("w1", 2), job_row(7, true),
                            node_row("w1", 3), erase("node", "head"), job_row(7, false),
                            node_row("w2", 4), job_row(8, true)},
                           3);
  auto again = gcs_log::open(d.path, 0, 1, {3});
  REQUIRE(again);
  CHECK(again->warnings.empty());
  CHECK(again->log.log_records() == 2);
  auto& t = again->tables;
  CHECK(t.at("node").size() == 2);
  CHECK(t.at("node").count("head") == 0);
  CHECK(port_of(t, "w1") == 3);
  CHECK(port_of(t, "w2") == 4);
  CHECK_FALSE(std::get<swarm::wire_msg::job_info>(t.at("job").at("7")).running);
  CHECK(std::get<swarm::wire_msg::job_info>(t.at("job").at("8")).running);
  CHECK(t.size() == written.size());
}

TEST_CASE("a snapshot folds the log into one file and starts an empty log") {
  temp_dir d;
  auto opened = gcs_log::open(d.path, 0, 1, {4});
  REQUIRE(opened);
  auto& [log, tables, warnings] = *opened;
  auto header_bytes = fs::file_size(d.log());
  CHECK_FALSE(fs::exists(d.snapshot()));
  for (uint16_t i = 0; i < 4; ++i) {
    auto r = node_row("n" + std::to_string(i), i);
    REQUIRE(log.append(r));
    swarm::actors::apply_record(tables, r);
  }
  CHECK(fs::file_size(d.log()) > header_bytes);
  REQUIRE(log.snapshot_due());
  REQUIRE(log.snapshot(tables));
  CHECK_FALSE(log.snapshot_due());
  CHECK(log.log_records() == 0);
  CHECK(fs::file_size(d.log()) == header_bytes);
  CHECK(fs::exists(d.snapshot()));
  CHECK_FALSE(fs::exists(d.path + "/shard-0/snapshot.tmp"));
  // A write after the snapshot lands in the new log and both are replayed.
  REQUIRE(log.append(erase("node", "n0")));
  auto again = gcs_log::open(d.path, 0, 1, {4});
  REQUIRE(again);
  CHECK(again->tables.at("node").size() == 3);
  CHECK(again->log.log_records() == 1);
}

TEST_CASE("a torn last record is dropped with a warning and the log stays writable") {
  temp_dir d;
  write_all(d.path, {node_row("a", 1), node_row("b", 2), node_row("c", 3)});
  auto whole = read_bytes(d.log());
  auto last = swarm::actors::encode_record(node_row("c", 3)).size();
  SUBCASE("cut short") {
    // A crash part-way through the last write.
    write_bytes(d.log(), {whole.begin(), whole.end() - static_cast<long>(last / 2)});
  }
  SUBCASE("zeros where its bytes should be") {
    std::fill(whole.end() - static_cast<long>(last), whole.end(), 0);
    write_bytes(d.log(), whole);
  }
  auto opened = gcs_log::open(d.path, 0, 1);
  REQUIRE(opened);
  REQUIRE(opened->warnings.size() == 1);
  auto at = std::to_string(whole.size() - last);
  CHECK(opened->warnings[0].find(d.log()) != std::string::npos);
  CHECK(opened->warnings[0].find("at byte " + at) != std::string::npos);
  CHECK(opened->tables.at("node").size() == 2);
  // The torn bytes are cut away, so the next record follows the last whole one.
  REQUIRE(opened->log.append(node_row("d", 4)));
  auto again = gcs_log::open(d.path, 0, 1);
  REQUIRE(again);
  CHECK(again->warnings.empty());
  CHECK(again->tables.at("node").size() == 3);
  CHECK(port_of(again->tables, "d") == 4);
}

TEST_CASE("a damaged record before the end fails open, naming the file and offset") {
  temp_dir d;
  write_all(d.path, {node_row("a", 1), node_row("b", 2), node_row("c", 3)});
  auto bytes = read_bytes(d.log());
  auto first = swarm::actors::encode_record(node_row("a", 1)).size();
  auto header = bytes.size() - 3 * first; // records of equal size here
  SUBCASE("a flipped payload byte in the second record") {
    bytes[header + first + 20] ^= 0x40;
    write_bytes(d.log(), bytes);
    auto opened = gcs_log::open(d.path, 0, 1);
    REQUIRE_FALSE(opened);
    CHECK(opened.err().message.find(d.log()) != std::string::npos);
    CHECK(opened.err().message.find("byte " + std::to_string(header + first)) !=
          std::string::npos);
    CHECK(opened.err().message.find("checksum") != std::string::npos);
  }
  SUBCASE("a flipped length in the first record") {
    bytes[header] ^= 0x01;
    write_bytes(d.log(), bytes);
    auto opened = gcs_log::open(d.path, 0, 1);
    REQUIRE_FALSE(opened);
    CHECK(opened.err().message.find("byte " + std::to_string(header)) !=
          std::string::npos);
  }
  SUBCASE("a damaged snapshot") {
    auto opened = gcs_log::open(d.path, 0, 1);
    REQUIRE(opened);
    REQUIRE(opened->log.snapshot(opened->tables));
    auto snap = read_bytes(d.snapshot());
    snap.back() ^= 0x01; // even its last record: a snapshot is never torn
    write_bytes(d.snapshot(), snap);
    auto again = gcs_log::open(d.path, 0, 1);
    REQUIRE_FALSE(again);
    CHECK(again.err().message.find(d.snapshot()) != std::string::npos);
  }
  // Nothing was dropped or rewritten on the way.
  CHECK(fs::exists(d.log()));
}

TEST_CASE("a record naming an unknown table fails open instead of being dropped") {
  temp_dir d;
  write_all(d.path, {node_row("a", 1)});
  auto size = fs::file_size(d.log());
  auto bogus = swarm::actors::encode_record({"bogus", "k", std::nullopt});
  auto bytes = read_bytes(d.log());
  bytes.insert(bytes.end(), bogus.begin(), bogus.end());
  auto tail = swarm::actors::encode_record(node_row("b", 2));
  bytes.insert(bytes.end(), tail.begin(), tail.end());
  write_bytes(d.log(), bytes);
  auto opened = gcs_log::open(d.path, 0, 1);
  REQUIRE_FALSE(opened);
  CHECK(opened.err().message.find("unknown control-store table 'bogus'") !=
        std::string::npos);
  CHECK(opened.err().message.find("byte " + std::to_string(size)) != std::string::npos);
}

TEST_CASE("appends are checked against the table's row type") {
  temp_dir d;
  auto opened = gcs_log::open(d.path, 0, 1);
  REQUIRE(opened);
  auto wrong = job_row(1, true);
  wrong.table = "node";
  auto r = opened->log.append(wrong);
  REQUIRE_FALSE(r);
  CHECK(r.err().message.find("node_info") != std::string::npos);
  CHECK_FALSE(opened->log.append(erase("nodes", "x")));
  CHECK(opened->log.log_records() == 0);
}

TEST_CASE("a put record without a row is refused before its row is decoded") {
  // Op byte 1 (put), then the table and the key as u32 length + bytes, and nothing else.
  std::vector<uint8_t> payload{1, 2, 0, 0, 0, 'k', 'v', 1, 0, 0, 0, 'x'};
  auto r = swarm::actors::decode_record(payload.data(), payload.size());
  REQUIRE_FALSE(r);
  CHECK(r.err().message == "a put record of 'kv/x' has no row");
}

TEST_CASE("a directory that cannot be created is a clear error") {
  temp_dir d;
  // A regular file where a directory should be: refused even for root.
  std::ofstream{d.path + "/occupied"} << "x";
  auto opened = gcs_log::open(d.path + "/occupied/gcs", 0, 1);
  REQUIRE_FALSE(opened);
  CHECK(opened.err().code == swarm::errc::io_error);
  CHECK(opened.err().message.find(d.path + "/occupied/gcs") != std::string::npos);
  CHECK(opened.err().message.find("Not a directory") != std::string::npos);
}

TEST_CASE("a store written for another shard count is refused with the way out") {
  temp_dir d;
  {
    auto opened = gcs_log::open(d.path, 1, 2);
    REQUIRE(opened);
    REQUIRE(opened->log.append(node_row("a", 1)));
  }
  auto opened = gcs_log::open(d.path, 1, 4);
  REQUIRE_FALSE(opened);
  CHECK(opened.err().message.find("shard 1 of 2") != std::string::npos);
  CHECK(opened.err().message.find("gcs_shards") != std::string::npos);
}

TEST_CASE("a write the disk refuses is cut back and later writes still land") {
  temp_dir d;
  auto opened = gcs_log::open(d.path, 0, 1);
  REQUIRE(opened);
  auto& log = opened->log;
  REQUIRE(log.append(node_row("a", 1)));
  auto size = fs::file_size(d.log());
  // The file may grow by a few bytes only: the next record is written in part, then
  // refused (EFBIG).
  auto old_handler = std::signal(SIGXFSZ, SIG_IGN);
  rlimit old_limit{};
  REQUIRE(::getrlimit(RLIMIT_FSIZE, &old_limit) == 0);
  rlimit small = old_limit;
  small.rlim_cur = size + 10;
  REQUIRE(::setrlimit(RLIMIT_FSIZE, &small) == 0);
  auto refused = log.append(node_row("b", 2));
  ::setrlimit(RLIMIT_FSIZE, &old_limit);
  std::signal(SIGXFSZ, old_handler);
  REQUIRE_FALSE(refused);
  CHECK(refused.err().code == swarm::errc::io_error);
  CHECK(refused.err().message.find(d.log()) != std::string::npos);
  CHECK(fs::file_size(d.log()) == size);
  CHECK(log.log_records() == 1);
  REQUIRE(log.append(node_row("c", 3)));
  auto again = gcs_log::open(d.path, 0, 1);
  REQUIRE(again);
  CHECK(again->warnings.empty());
  CHECK(again->tables.at("node").size() == 2);
  CHECK(again->tables.at("node").count("b") == 0);
}
