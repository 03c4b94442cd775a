// The endpoint under TLS, between real sockets, through a relay that records (and may
// change) every byte that crosses.

#include <algorithm>

#include "tests/transport/endpoint_peers.hpp"

using namespace swarm::wire_msg;
using namespace swarm::endpoint_test;
using namespace std::chrono_literals;

namespace {

std::unique_ptr<endpoint> start_tls(const std::string& name, inbox& in,
                                    tls_options::mode use) {
  endpoint_config cfg;
  cfg.name = name;
  cfg.secret = secret;
  cfg.handshake_timeout = 2000ms;
  cfg.tls.use = use;
  auto ep = endpoint::start(cfg, in.handlers());
  REQUIRE(ep);
  return std::move(*ep);
}

// A TCP relay on 127.0.0.1 to `target_port`: every connection it accepts is forwarded,
// and the bytes from the dialling side are recorded; with `tamper`, the last byte of
// each read from the dialling side after its first is changed on the way. (Swarm's proofs
// name the address dialled, so no connection through it gets past the handshake: what
// it sees is what a man in the middle would.)
class relay {
public:
  explicit relay(uint16_t target_port, bool tamper = false)
      : target_(target_port), tamper_(tamper) {
    listen_ = raw_listen(port_);
    thread_ = std::thread{[this] { run(); }};
  }
  ~relay() {
    stop_ = true;
    thread_.join();
    ::close(listen_);
  }
  uint16_t port() const { return port_; }
  std::vector<uint8_t> recorded() {
    std::lock_guard<std::mutex> g{mtx_};
    return seen_;
  }

private:
  void run() {
    std::vector<std::pair<int, int>> pairs; // dialler, target
    size_t reads = 0;
    while (!stop_) {
      std::vector<pollfd> fds{{listen_, POLLIN, 0}};
      for (auto [a, b] : pairs) {
        fds.push_back({a, POLLIN, 0});
        fds.push_back({b, POLLIN, 0});
      }
      if (::poll(fds.data(), fds.size(), 50) <= 0) continue;
      if (fds[0].revents & POLLIN) {
        int a = ::accept(listen_, nullptr, nullptr);
        if (a >= 0) pairs.emplace_back(a, raw_connect(target_));
      }
      for (size_t i = 1; i < fds.size(); ++i) {
        if (!(fds[i].revents & (POLLIN | POLLHUP))) continue;
        auto& [a, b] = pairs[(i - 1) / 2];
        bool from_dialler = (i - 1) % 2 == 0;
        uint8_t buf[65536];
        auto n = ::recv(fds[i].fd, buf, sizeof(buf), 0);
        if (n <= 0) {
          ::shutdown(from_dialler ? b : a, SHUT_WR);
          continue;
        }
        if (from_dialler) {
          std::lock_guard<std::mutex> g{mtx_};
          seen_.insert(seen_.end(), buf, buf + n);
          if (tamper_ && reads++ > 0) buf[n - 1] ^= 0x20;
        }
        for (ssize_t off = 0; off < n;) {
          auto w = ::send(from_dialler ? b : a, buf + off, static_cast<size_t>(n - off),
                          MSG_NOSIGNAL);
          if (w <= 0) break;
          off += w;
        }
      }
    }
    for (auto [a, b] : pairs) {
      ::close(a);
      ::close(b);
    }
  }

  uint16_t target_;
  bool tamper_;
  uint16_t port_ = 0;
  int listen_ = -1;
  std::atomic<bool> stop_{false};
  std::mutex mtx_;
  std::vector<uint8_t> seen_;
  std::thread thread_;
};

const std::string marker = "SWARM-PLAINTEXT-MARKER";

std::vector<uint8_t> marked(size_t n) {
  std::vector<uint8_t> out(n);
  for (size_t i = 0; i < n; ++i)
    out[i] = static_cast<uint8_t>(marker[i % marker.size()]);
  return out;
}

bool contains_marker(const std::vector<uint8_t>& bytes) {
  return std::search(bytes.begin(), bytes.end(), marker.begin(), marker.end()) !=
         bytes.end();
}

// Sends a small and a large chunk of marked bytes from `worker` to `head` and checks
// they arrive whole.
void send_marked(endpoint& worker, inbox& in_head) {
  REQUIRE(worker.send("head", object_chunk{{marked(64)}, {1, 1}, 0, 64}));
  std::vector<uint8_t> big = marked(3 << 20);
  auto shared = std::make_shared<std::vector<uint8_t>>(big);
  object_chunk from_memory{{}, {2, 1}, 0, big.size()};
  from_memory.source = shared;
  from_memory.source_data = shared->data();
  from_memory.source_length = shared->size();
  REQUIRE(in_head.wait([](inbox& i) { return i.got.size() >= 1; }));
  REQUIRE(worker.send("head", from_memory));
  REQUIRE(in_head.wait([](inbox& i) { return i.got.size() >= 2; }, 10s));
  std::lock_guard<std::mutex> g{in_head.mtx};
  auto& small = std::get<object_chunk>(in_head.got[0].second);
  auto& large = std::get<object_chunk>(in_head.got[1].second);
  CHECK(std::vector<uint8_t>(small.bytes(), small.bytes() + small.size()) == marked(64));
  REQUIRE(large.size() == big.size());
  CHECK(std::equal(big.begin(), big.end(), large.bytes()));
}

} // namespace

TEST_CASE("under TLS frames arrive whole, chunks sent from a value's memory included") {
  inbox in_head, in_worker;
  auto head = start_tls("head", in_head, tls_options::mode::on);
  auto worker = start_tls("worker-1", in_worker, tls_options::mode::on);
  REQUIRE(worker->connect("127.0.0.1", head->port(), 3s));
  send_marked(*worker, in_head);
  CHECK(logged(in_head, "TLS 1.3 TLS_AES_128_GCM_SHA256, pre-shared key"));
  // Both ways, on the bulk connection too.
  REQUIRE(head->send("worker-1", object_chunk{{marked(1 << 20)}, {3, 1}, 0, 1 << 20}));
  CHECK(in_worker.wait([](inbox& i) { return i.got.size() == 1; }));
}

TEST_CASE("under TLS a man in the middle reads none of what crosses, which he reads "
          "with TLS off") {
  for (auto use : {tls_options::mode::on, tls_options::mode::off}) {
    CAPTURE(to_string(use));
    inbox in_head, in_worker;
    auto head = start_tls("head", in_head, use);
    // The node's name is in its hello, the first frame it sends.
    auto worker = start_tls(marker, in_worker, use);
    relay wire{head->port()};
    CHECK_FALSE(worker->connect("127.0.0.1", wire.port(), 2s));
    auto seen = wire.recorded();
    CHECK(seen.size() > 100);
    CHECK(contains_marker(seen) == (use == tls_options::mode::off));
  }
}

TEST_CASE("under TLS a byte changed on the way closes the connection before anything "
          "reaches the node") {
  inbox in_head, in_worker;
  auto head = start_tls("head", in_head, tls_options::mode::on);
  auto worker = start_tls("worker-1", in_worker, tls_options::mode::on);
  relay wire{head->port(), true};
  CHECK_FALSE(worker->connect("127.0.0.1", wire.port(), 2s));
  CHECK(in_head.wait([](inbox& i) {
    return std::any_of(i.logs.begin(), i.logs.end(), [](auto& l) {
      return l.find("bad_record_mac") != std::string::npos ||
             l.find("bad record mac") != std::string::npos;
    });
  }));
  std::lock_guard<std::mutex> g{in_head.mtx};
  CHECK(in_head.got.empty());
}

TEST_CASE("a node that requires TLS refuses a peer in the clear, and a node with TLS off "
          "refuses one that begins TLS, each saying why") {
  SUBCASE("TLS on at the node, off at the peer") {
    inbox in_head, in_worker;
    auto head = start_tls("head", in_head, tls_options::mode::on);
    auto worker = start_tls("worker-1", in_worker, tls_options::mode::off);
    CHECK_FALSE(worker->connect("127.0.0.1", head->port(), 2s));
    CHECK(logged(in_head, "the TLS handshake failed"));
  }
  SUBCASE("TLS off at the node, on at the peer") {
    inbox in_head, in_worker;
    auto head = start_tls("head", in_head, tls_options::mode::off);
    auto worker = start_tls("worker-1", in_worker, tls_options::mode::on);
    CHECK_FALSE(worker->connect("127.0.0.1", head->port(), 2s));
    CHECK(logged(in_head, "TLS is off on this node"));
  }
  SUBCASE("another cluster secret") {
    inbox in_head, in_worker;
    auto head = start_tls("head", in_head, tls_options::mode::on);
    endpoint_config cfg;
    cfg.name = "stranger";
    cfg.secret = "the-secret-of-some-other-cluster";
    cfg.tls.use = tls_options::mode::on;
    auto stranger = endpoint::start(cfg, in_worker.handlers());
    REQUIRE(stranger);
    auto got = (*stranger)->connect("127.0.0.1", head->port(), 2s);
    CHECK_FALSE(got);
    CHECK_FALSE(head->connected("stranger"));
  }
}

TEST_CASE("a node with TLS on automatic takes loopback peers that speak TLS and peers "
          "that do not") {
  inbox in_head, in_a, in_b;
  auto head = start_tls("head", in_head, tls_options::mode::automatic);
  auto with = start_tls("worker-1", in_a, tls_options::mode::on);
  auto without = start_tls("worker-2", in_b, tls_options::mode::automatic);
  REQUIRE(with->connect("127.0.0.1", head->port(), 3s));
  REQUIRE(without->connect("127.0.0.1", head->port(), 3s));
  REQUIRE(with->send("head", tiny_chunk()));
  REQUIRE(without->send("head", tiny_chunk()));
  CHECK(in_head.wait([](inbox& i) { return i.got.size() == 2; }));
  // The head answers each over the connection it dialled in on.
  REQUIRE(head->send("worker-1", tiny_chunk()));
  REQUIRE(head->send("worker-2", tiny_chunk()));
  CHECK(in_a.wait([](inbox& i) { return i.got.size() == 1; }));
  CHECK(in_b.wait([](inbox& i) { return i.got.size() == 1; }));
}
