// Object-store workloads, named as in Ray's microbenchmark, beside allocation, reference
// count and memcpy floors.

#include <atomic>
#include <cstring>
#include <memory>
#include <vector>

#include "framework/swarm.hpp"
#include "tools/bench_local.hpp"
#include "tools/bench_stats.hpp"

namespace swarm::tools {

namespace {

constexpr size_t big_object_bytes = size_t{100} << 20;
constexpr size_t ref_list_size = 10'000;

double memcpy_100mb_us(bench_session& s) {
  return s.floor("memcpy_100mb_us", "us", [&] {
    std::vector<char> src(big_object_bytes, 'x');
    std::vector<char> dst(big_object_bytes, 'y');
    return median_of_reps(s.plan().reps, 1, [&](size_t) {
      auto t0 = bench_clock::now();
      std::memcpy(dst.data(), src.data(), big_object_bytes);
      auto us = seconds_since(t0) * 1e6;
      check(dst[big_object_bytes - 1] == 'x', "memcpy");
      return us;
    });
  });
}

double memcpy_gigabytes(bench_session& s) {
  double us = memcpy_100mb_us(s);
  return s.floor("memcpy_gigabytes", "GB/s",
                 [&] { return static_cast<double>(big_object_bytes) / us / 1e3; });
}

void measure_small_objects(bench_session& s, local_rig& rig) {
  auto& p = s.plan();
  if (s.wants("single_client_put_calls")) {
    double floor = s.floor("make_shared_small_per_s", "ops/s", [&] {
      return median_of_reps(p.reps, p.put_ops, [&](size_t n) {
        std::vector<std::shared_ptr<int>> keep;
        keep.reserve(n);
        auto t0 = bench_clock::now();
        for (size_t i = 0; i < n; ++i)
          keep.push_back(std::make_shared<int>(static_cast<int>(i)));
        return static_cast<double>(n) / seconds_since(t0);
      });
    });
    double rate = median_of_reps(p.reps, p.put_ops, [&](size_t n) {
      std::vector<object_ref<int>> refs;
      refs.reserve(n);
      auto t0 = bench_clock::now();
      for (size_t i = 0; i < n && !past_cap(i, t0, p.cap); ++i)
        refs.push_back(rig.rt.put(static_cast<int>(i)));
      auto r = static_cast<double>(refs.size()) / seconds_since(t0);
      check(refs.back().get().value() == static_cast<int>(refs.size()) - 1, "put");
      return r;
    });
    s.add({"single_client_put_calls", rate, "ops/s", "make_shared_small_per_s", floor,
           goal::at_least, 1'000'000, ">= 1,000,000/s"});
  }

  if (s.wants("single_client_get_calls")) {
    double floor = s.floor("shared_ptr_copy_per_s", "ops/s", [&] {
      auto shared = std::make_shared<const int>(42);
      return median_of_reps(p.reps, p.get_ops, [&](size_t n) {
        std::atomic<long> sum{0};
        auto t0 = bench_clock::now();
        for (size_t i = 0; i < n; ++i) {
          std::shared_ptr<const int> copy = shared;
          sum.fetch_add(*copy, std::memory_order_relaxed);
        }
        return static_cast<double>(n) / seconds_since(t0);
      });
    });
    auto small = rig.rt.put(42);
    double rate = median_of_reps(p.reps, p.get_ops, [&](size_t n) {
      long sum = 0;
      auto t0 = bench_clock::now();
      size_t i = 0;
      for (; i < n && !past_cap(i, t0, p.cap); ++i)
        sum += small.get().value();
      auto r = static_cast<double>(i) / seconds_since(t0);
      check(sum == 42 * static_cast<long>(i), "get");
      return r;
    });
    s.add({"single_client_get_calls", rate, "ops/s", "shared_ptr_copy_per_s", floor,
           goal::at_least, 2'000'000, ">= 2,000,000/s"});
  }

  if (s.wants("single_client_get_10k_refs")) {
    std::vector<object_ref<int>> refs;
    std::vector<std::shared_ptr<const int>> ptrs;
    for (size_t i = 0; i < ref_list_size; ++i) {
      refs.push_back(rig.rt.put(static_cast<int>(i)));
      ptrs.push_back(std::make_shared<const int>(static_cast<int>(i)));
    }
    double floor = s.floor("read_10k_shared_ptrs_per_s", "reads/s", [&] {
      return median_of_reps(p.reps, p.ref_list_gets, [&](size_t n) {
        auto t0 = bench_clock::now();
        size_t i = 0;
        for (; i < n && !past_cap(i, t0, p.cap); ++i) {
          std::vector<int> values;
          values.reserve(ptrs.size());
          for (auto& ptr : ptrs)
            values.push_back(*ptr);
          check(values.back() == static_cast<int>(ref_list_size) - 1, "reading pointers");
        }
        return static_cast<double>(i) / seconds_since(t0);
      });
    });
    double rate = median_of_reps(p.reps, p.ref_list_gets, [&](size_t n) {
      auto t0 = bench_clock::now();
      size_t i = 0;
      for (; i < n && !past_cap(i, t0, p.cap); ++i) {
        auto got = rig.rt.get(refs).value();
        check(got.back() == static_cast<int>(ref_list_size) - 1,
              "get of 10,000 references");
      }
      return static_cast<double>(i) / seconds_since(t0);
    });
    s.add(versus("single_client_get_10k_refs", rate, "gets/s",
                 "read_10k_shared_ptrs_per_s", floor));
  }

  // Ray's: one object holding 10,000 refs of small objects, put once, then read whole.
  if (s.wants("single_client_get_object_containing_10k_refs")) {
    std::vector<object_ref<int>> refs;
    std::vector<std::shared_ptr<const int>> ptrs;
    for (size_t i = 0; i < ref_list_size; ++i) {
      refs.push_back(rig.rt.put(static_cast<int>(i)));
      ptrs.push_back(std::make_shared<const int>(static_cast<int>(i)));
    }
    auto containing = rig.rt.put(std::move(refs));
    double floor = s.floor("copy_10k_shared_ptrs_per_s", "copies/s", [&] {
      return median_of_reps(p.reps, p.ref_list_gets, [&](size_t n) {
        auto t0 = bench_clock::now();
        size_t i = 0;
        for (; i < n && !past_cap(i, t0, p.cap); ++i) {
          auto copy = ptrs;
          check(*copy.back() == static_cast<int>(ref_list_size) - 1, "copying pointers");
        }
        return static_cast<double>(i) / seconds_since(t0);
      });
    });
    double rate = median_of_reps(p.reps, p.ref_list_gets, [&](size_t n) {
      auto t0 = bench_clock::now();
      size_t i = 0;
      for (; i < n && !past_cap(i, t0, p.cap); ++i) {
        auto got = containing.get().value();
        check(got.size() == ref_list_size && got.back().ready(),
              "get of an object holding 10,000 references");
      }
      return static_cast<double>(i) / seconds_since(t0);
    });
    s.add(versus("single_client_get_object_containing_10k_refs", rate, "gets/s",
                 "copy_10k_shared_ptrs_per_s", floor));
  }
}

void measure_big_objects(bench_session& s, local_rig& rig) {
  auto& p = s.plan();
  if (s.wants("single_client_put_gigabytes")) {
    double floor = memcpy_gigabytes(s);
    const std::vector<char> value(big_object_bytes, 'v');
    double gbps = median_of_reps(p.reps, p.big_ops, [&](size_t n) {
      auto t0 = bench_clock::now();
      size_t i = 0;
      for (; i < n && !(i > 0 && bench_clock::now() - t0 > p.cap); ++i) {
        auto ref = rig.rt.put(value); // a copy: the caller keeps its value
        check(ref.get_shared().value()->size() == big_object_bytes, "put 100 MB");
      }
      return static_cast<double>(i * big_object_bytes) / seconds_since(t0) / 1e9;
    });
    s.add(versus("single_client_put_gigabytes", gbps, "GB/s", "memcpy_gigabytes", floor));
  }

  if (s.wants("single_client_get_100mb_us")) {
    double floor = memcpy_100mb_us(s);
    auto big = rig.rt.put(std::vector<char>(big_object_bytes, 'x'));
    const void* first = big.get_shared().value().get();
    bool zero_copy = true;
    double us = median_of_reps(p.reps, p.big_ops * 10, [&](size_t n) {
      auto t0 = bench_clock::now();
      size_t i = 0;
      for (; i < n && !past_cap(i, t0, p.cap); ++i) {
        auto ptr = big.get_shared().value();
        zero_copy = zero_copy && ptr.get() == first;
        check(ptr->size() == big_object_bytes, "get 100 MB");
      }
      return seconds_since(t0) * 1e6 / static_cast<double>(i);
    });
    check(zero_copy, "get_shared of 100 MB (the object was copied)");
    s.add({"single_client_get_100mb_us", us, "us", "memcpy_100mb_us", floor, goal::below,
           50, "< 50 us"});
  }
}

} // namespace

void measure_objects(bench_session& s, local_rig& rig) {
  measure_small_objects(s, rig);
  // Last, so the 100 MB objects do not sit in the store during the other workloads.
  measure_big_objects(s, rig);
}

} // namespace swarm::tools
