// The context thread pool (librknnrt/core/thread_pool.h) and the kernel-variant dispatch point
// (kernels/cpu/dispatch.h): every task runs exactly once on a valid thread index, nested and
// concurrent calls, scratch memory, the thread binding, variant names, the test override, and
// ORKNN_CPU_KERNELS (ctest runs this program again with the variable set and
// ORKNN_EXPECT_KERNEL_VARIANT naming the variant it must produce).
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <vector>

#if defined(__linux__)
#include <pthread.h>
#include <sched.h>
#endif

#include "core/thread_pool.h"
#include "dispatch.h"

// cmocka comes last (its macros clash with standard headers) and needs these first.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
extern "C" {
#include <cmocka.h>
}

namespace {

using namespace orknn;
using kernels::cpu::KernelVariant;

void check_every_task_once(ThreadPool& pool, size_t count) {
  std::vector<std::atomic<int>> runs(count);
  std::atomic<bool> bad_thread{false};
  pool.parallel_for(count, [&](size_t index, size_t thread) {
    runs[index].fetch_add(1);
    if (thread >= pool.thread_count()) bad_thread = true;
  });
  for (size_t i = 0; i < count; ++i) assert_int_equal(runs[i].load(), 1);
  assert_false(bad_thread.load());
}

void test_every_task_runs_once(void**) {
  for (size_t threads : {1u, 2u, 4u}) {
    ThreadPool pool(threads);
    assert_int_equal(pool.thread_count(), threads);
    for (size_t count : {0u, 1u, 2u, 3u, 100u, 10000u}) check_every_task_once(pool, count);
    // Back-to-back jobs of varying sizes: a worker still leaving one job must never run a task
    // of the next (it once could, after reading the next job's count; tens of thousands of
    // jobs made that show).
    std::mt19937 random(static_cast<uint32_t>(threads));
    for (int repeat = 0; repeat < 20000; ++repeat) check_every_task_once(pool, random() % 40);
  }
}

// Tasks are claimed in chunks that shrink as a job runs out, the calling thread's from the
// front and the workers' from the back: the caller runs a prefix of the indices in increasing
// order, every index runs once, and long jobs (a depthwise layer's channels) are shared by
// more than one claim. A job longer than a claim word holds (2^20 - 1 tasks) runs as several.
void test_chunked_claims(void**) {
  for (size_t threads : {2u, 3u, 4u}) {
    ThreadPool pool(threads);
    for (size_t count : {2u, 7u, 8u, 9u, 17u, 960u, 100003u, 2100000u}) {
      std::vector<std::atomic<int>> runs(count);
      std::vector<size_t> ran(threads, 0);
      std::atomic<bool> caller_out_of_order{false};
      pool.parallel_for(count, [&](size_t index, size_t thread) {
        runs[index].fetch_add(1);
        // Each thread writes only its own entries.
        if (thread == 0 && index != ran[0]) caller_out_of_order = true;
        ++ran[thread];
      });
      for (size_t i = 0; i < count; ++i) assert_int_equal(runs[i].load(), 1);
      if (count <= 100003u) assert_false(caller_out_of_order.load());
      size_t total = 0;
      for (size_t n : ran) total += n;
      assert_int_equal(total, count);
    }
  }
}

// Per thread, the tasks it ran in order and the guess it was given for each (wrong_guesses
// counts the guesses that did not name the task that thread ran next).
struct GuessRecord {
  std::vector<size_t> tasks;
  std::vector<size_t> guesses;
};
// Each task lasts `task_time`, so that both threads get several.
void record_guesses(ThreadPool& pool, size_t count, std::vector<GuessRecord>& records,
                    std::chrono::microseconds task_time = {}) {
  for (GuessRecord& record : records) record.tasks.clear(), record.guesses.clear();
  pool.parallel_for(count, [&](size_t index, size_t thread) {
    records[thread].tasks.push_back(index);  // each thread writes only its own record
    records[thread].guesses.push_back(ThreadPool::likely_next_index(index));
    const auto until = std::chrono::steady_clock::now() + task_time;
    while (std::chrono::steady_clock::now() < until) {
    }
  });
}
size_t wrong_guesses(const GuessRecord& record) {
  size_t wrong = 0;
  for (size_t i = 0; i + 1 < record.tasks.size(); ++i) {
    if (record.guesses[i] != record.tasks[i + 1]) ++wrong;
  }
  return wrong;
}

// likely_next_index, which kernels use to prefetch the operands of their next task: exact for
// the calling thread, for a worker inside a chunk, and on two threads once claims are single
// tasks (a worker then runs the task below its last one); index + 1 outside a pool's task and
// in loops run inline.
void test_likely_next_index(void**) {
  assert_int_equal(ThreadPool::likely_next_index(5), 6);
  ThreadPool serial(1);
  std::vector<GuessRecord> one(1);
  record_guesses(serial, 10, one);
  assert_int_equal(one[0].tasks.size(), 10);
  assert_int_equal(wrong_guesses(one[0]), 0);
  assert_int_equal(one[0].guesses.back(), 10);

  ThreadPool pool(2);
  std::vector<GuessRecord> two(2);
  size_t worker_pairs = 0;  // so that the worker's check is not vacuous
  for (int round = 0; round < 50; ++round) {
    // Fewer than 16 tasks: every claim is one task.
    record_guesses(pool, 10, two, std::chrono::microseconds(50));
    assert_int_equal(wrong_guesses(two[0]), 0);
    assert_int_equal(wrong_guesses(two[1]), 0);
    if (two[1].tasks.size() > 1) worker_pairs += two[1].tasks.size() - 1;
  }
  assert_true(worker_pairs > 0);
  for (int round = 0; round < 20; ++round) {
    record_guesses(pool, 960, two);  // chunks of up to 60 tasks
    assert_int_equal(wrong_guesses(two[0]), 0);
  }
  std::atomic<bool> inner_wrong{false};
  pool.parallel_for(4, [&](size_t, size_t) {
    pool.parallel_for(3, [&](size_t index, size_t) {
      if (ThreadPool::likely_next_index(index) != index + 1) inner_wrong = true;
    });
  });
  assert_false(inner_wrong.load());
}

void test_nested_calls_run_inline(void**) {
  ThreadPool pool(2);
  std::atomic<int> inner{0};
  pool.parallel_for(4, [&](size_t, size_t outer_thread) {
    pool.parallel_for(3, [&](size_t, size_t thread) {
      if (thread == outer_thread) inner.fetch_add(1);
    });
  });
  assert_int_equal(inner.load(), 12);
}

void test_concurrent_callers(void**) {
  ThreadPool pool(3);
  std::vector<std::thread> callers;
  std::atomic<int> failures{0};
  for (int caller = 0; caller < 4; ++caller) {
    callers.emplace_back([&] {
      for (int repeat = 0; repeat < 200; ++repeat) {
        std::atomic<int> sum{0};
        pool.parallel_for(17, [&](size_t index, size_t) { sum += static_cast<int>(index); });
        if (sum.load() != 17 * 16 / 2) failures.fetch_add(1);
      }
    });
  }
  for (std::thread& caller : callers) caller.join();
  assert_int_equal(failures.load(), 0);
}

// Workers under a real-time policy must leave the CPU to callers that need it. As the
// converter's calibration does, as many application threads as CPUs each run jobs on a pool of
// their own (a worker each), all with SCHED_FIFO, which never time-slices; each caller sleeps
// inside a task of every job, as a page fault or a contended lock would make it. A worker that
// has run out of tasks waits for its job's end, which only its caller can bring; a worker that
// polls without ever giving up its CPU (until session 19: seen as a converter that hung under
// `chrt -f`) can hold every CPU while the callers wait for one. The test then fails on its
// deadline instead of hanging. Skipped where the process may not use SCHED_FIFO.
void test_real_time_workers_yield(void**) {
#if defined(__linux__)
  const size_t callers = std::max(2u, std::thread::hardware_concurrency());
  constexpr int kJobs = 300;
  constexpr size_t kTasks = 8;
  std::atomic<int> done{0};
  std::atomic<int> refused{0};
  std::atomic<size_t> tasks_run{0};
  std::vector<std::thread> threads;
  for (size_t c = 0; c < callers; ++c) {
    threads.emplace_back([&] {
      sched_param priority{};
      priority.sched_priority = 1;
      if (pthread_setschedparam(pthread_self(), SCHED_FIFO, &priority) != 0) {
        refused.fetch_add(1);
        done.fetch_add(1);
        return;
      }
      {
        ThreadPool pool(2);  // the worker inherits the caller's policy
        for (int job = 0; job < kJobs; ++job) {
          pool.parallel_for(kTasks, [&](size_t index, size_t) {
            if (index == 0) std::this_thread::sleep_for(std::chrono::microseconds(50));
            tasks_run.fetch_add(1);
          });
        }
      }
      done.fetch_add(1);
    });
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (done.load() < static_cast<int>(callers) && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  if (done.load() < static_cast<int>(callers)) {
    // The callers cannot be joined or stopped: end the test binary with the failure.
    std::fprintf(stderr, "real-time pools: jobs not done after 30 s (%zu tasks ran)\n",
                 tasks_run.load());
    std::_Exit(1);
  }
  for (std::thread& thread : threads) thread.join();
  if (refused.load() != 0) {
    std::printf("SKIPPED real-time workers: SCHED_FIFO not permitted here\n");
    return;
  }
  assert_int_equal(tasks_run.load(), callers * kJobs * kTasks);
#endif
}

void test_scratch(void**) {
  ThreadPool pool(2);
  pool.reserve_scratch(1000);
  uint8_t* first = pool.scratch(0, 1000);
  uint8_t* second = pool.scratch(1, 10);
  assert_non_null(first);
  assert_non_null(second);
  assert_true(first != second);
  assert_int_equal(reinterpret_cast<uintptr_t>(first) % 64, 0);
  assert_ptr_equal(pool.scratch(0, 500), first);  // reserved: no reallocation
  std::memset(pool.scratch(1, 5000), 1, 5000);    // grows on demand
}

void test_binding(void**) {
  assert_null(ThreadPool::current());
  ThreadPool& serial = ThreadPool::current_or_serial();
  assert_int_equal(serial.thread_count(), 1);
  ThreadPool pool(2);
  {
    ThreadPool::Scope scope(&pool);
    assert_ptr_equal(ThreadPool::current(), &pool);
    assert_ptr_equal(&ThreadPool::current_or_serial(), &pool);
    {
      ThreadPool inner(1);
      ThreadPool::Scope inner_scope(&inner);
      assert_ptr_equal(ThreadPool::current(), &inner);
    }
    assert_ptr_equal(ThreadPool::current(), &pool);
    // Another thread has no binding.
    bool other_unbound = false;
    std::thread([&] { other_unbound = ThreadPool::current() == nullptr; }).join();
    assert_true(other_unbound);
  }
  assert_null(ThreadPool::current());
  assert_true(ThreadPool::default_thread_count() >= 1);
}

void test_variant_names(void**) {
  for (KernelVariant variant : {KernelVariant::kReference, KernelVariant::kPortable,
                                KernelVariant::kAvx2, KernelVariant::kAvx512, KernelVariant::kNeon,
                                KernelVariant::kNeonDotprod, KernelVariant::kNeonI8mm}) {
    const auto parsed =
        kernels::cpu::parse_kernel_variant(kernels::cpu::kernel_variant_name(variant));
    assert_true(parsed.has_value());
    assert_int_equal(static_cast<int>(*parsed), static_cast<int>(variant));
  }
  assert_false(kernels::cpu::parse_kernel_variant("avx1024").has_value());
  assert_true(kernels::cpu::kernel_variant_available(KernelVariant::kReference));
  assert_true(kernels::cpu::kernel_variant_available(KernelVariant::kPortable));
  assert_true(kernels::cpu::kernel_variant_available(kernels::cpu::best_kernel_variant()));
  assert_true(kernels::cpu::best_kernel_variant() != KernelVariant::kReference);
#if defined(__x86_64__)
  // This project's x86 machines all have AVX2 + FMA (DESIGN.md 7); the dispatcher must see it,
  // and prefer avx512 exactly when it detected AVX-512 F/BW/VL/VNNI (Zen 4; not Zen 3).
  const std::string x86_features = kernels::cpu::detected_cpu_features();
  const bool vnni = x86_features.find("avx512vnni") != std::string::npos;
  assert_int_equal(kernels::cpu::kernel_variant_available(KernelVariant::kAvx512), vnni);
  std::printf("x86 features '%s': best variant %s\n", x86_features.c_str(),
              kernels::cpu::kernel_variant_name(kernels::cpu::best_kernel_variant()));
  if (std::getenv("ORKNN_EXPECT_NO_AVX2") == nullptr) {
    assert_int_equal(static_cast<int>(kernels::cpu::best_kernel_variant()),
                     static_cast<int>(vnni ? KernelVariant::kAvx512 : KernelVariant::kAvx2));
  }
#else
  assert_false(kernels::cpu::kernel_variant_available(KernelVariant::kAvx512));
#endif
#if defined(__aarch64__)
  // Every AArch64 CPU has NEON; the dispatcher prefers SMMLA, then SDOT, then plain NEON, as
  // HWCAP reports them (the cross tests emulate CPU models with and without each).
  const std::string features = kernels::cpu::detected_cpu_features();
  KernelVariant expected = KernelVariant::kNeon;
  if (features.find("i8mm") != std::string::npos) {
    expected = KernelVariant::kNeonI8mm;
  } else if (features.find("dotprod") != std::string::npos) {
    expected = KernelVariant::kNeonDotprod;
  }
  assert_string_equal(kernels::cpu::kernel_variant_name(kernels::cpu::best_kernel_variant()),
                      kernels::cpu::kernel_variant_name(expected));
  // A dot-product variant is available exactly when its instructions are.
  assert_int_equal(kernels::cpu::kernel_variant_available(KernelVariant::kNeonDotprod),
                   features.find("dotprod") != std::string::npos);
  assert_int_equal(kernels::cpu::kernel_variant_available(KernelVariant::kNeonI8mm),
                   features.find("i8mm") != std::string::npos);
#else
  assert_false(kernels::cpu::kernel_variant_available(KernelVariant::kNeonDotprod));
  assert_false(kernels::cpu::kernel_variant_available(KernelVariant::kNeonI8mm));
#endif
}

// ORKNN_EXPECT_CPU_FEATURES (set by the cross tests per emulated CPU model, e.g. "asimd" for a
// Cortex-A53, "asimd dotprod" for a Cortex-A76) must be exactly what the dispatcher detected.
void test_detected_features(void**) {
  const char* features = kernels::cpu::detected_cpu_features();
  assert_non_null(features);
  const char* expected = std::getenv("ORKNN_EXPECT_CPU_FEATURES");
  if (expected) {
    if (std::strcmp(features, expected) != 0) {
      fail_msg("detected CPU features '%s', expected '%s'", features, expected);
    }
  }
#if defined(__x86_64__)
  // "avx2 fma", then the AVX-512 set when the CPU (and OS) has all of it.
  if (std::getenv("ORKNN_EXPECT_NO_AVX2") == nullptr) {
    const std::string text = features;
    if (text != "avx2 fma" && text != "avx2 fma avx512f avx512bw avx512vl avx512vnni") {
      fail_msg("detected CPU features '%s'", features);
    }
  }
#endif
}

void test_override(void**) {
  const KernelVariant before = kernels::cpu::selected_kernel_variant();
  {
    kernels::cpu::ScopedKernelVariant force(KernelVariant::kReference);
    assert_int_equal(static_cast<int>(kernels::cpu::selected_kernel_variant()),
                     static_cast<int>(KernelVariant::kReference));
    {
      kernels::cpu::ScopedKernelVariant inner(KernelVariant::kPortable);
      assert_int_equal(static_cast<int>(kernels::cpu::selected_kernel_variant()),
                       static_cast<int>(KernelVariant::kPortable));
    }
    assert_int_equal(static_cast<int>(kernels::cpu::selected_kernel_variant()),
                     static_cast<int>(KernelVariant::kReference));
  }
  assert_int_equal(static_cast<int>(kernels::cpu::selected_kernel_variant()),
                   static_cast<int>(before));
}

// ORKNN_CPU_KERNELS decides the selection without an override (set by ctest; with neither
// variable set this checks the default, the best variant).
void test_environment(void**) {
  const char* expected = std::getenv("ORKNN_EXPECT_KERNEL_VARIANT");
  KernelVariant want = kernels::cpu::best_kernel_variant();
  if (expected && *expected) {
    const auto parsed = kernels::cpu::parse_kernel_variant(expected);
    assert_true(parsed.has_value());
    // A variant this CPU cannot run is refused (with a warning) in favour of the best one.
    if (kernels::cpu::kernel_variant_available(*parsed)) want = *parsed;
  }
  assert_string_equal(kernels::cpu::kernel_variant_name(kernels::cpu::selected_kernel_variant()),
                      kernels::cpu::kernel_variant_name(want));
}

}  // namespace

int main() {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_every_task_runs_once),
      cmocka_unit_test(test_chunked_claims),
      cmocka_unit_test(test_likely_next_index),
      cmocka_unit_test(test_nested_calls_run_inline),
      cmocka_unit_test(test_concurrent_callers),
      cmocka_unit_test(test_real_time_workers_yield),
      cmocka_unit_test(test_scratch),
      cmocka_unit_test(test_binding),
      cmocka_unit_test(test_variant_names),
      cmocka_unit_test(test_detected_features),
      cmocka_unit_test(test_override),
      cmocka_unit_test(test_environment),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
