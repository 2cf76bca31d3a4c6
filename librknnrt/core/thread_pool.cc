#include "core/thread_pool.h"

#include "core/cpu_topology.h"

#include <cassert>
#include <chrono>
#include <cstdlib>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif
#if defined(__linux__)
#include <pthread.h>
#include <sched.h>
#endif

namespace orknn {
namespace {

// The pool whose task the calling thread is running (for nested parallel_for), and its index.
struct RunningTask {
  const ThreadPool* pool = nullptr;
  size_t thread = 0;
};
thread_local RunningTask running_task;
thread_local ThreadPool* bound_pool = nullptr;

void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  _mm_pause();
#elif defined(__aarch64__) || defined(__arm__)
  asm volatile("yield");
#endif
}

// On big.LITTLE CPUs, keeps the workers on the fast cores (core/cpu_topology.h); nothing when
// all allowed CPUs are alike. The calling thread is the application's and is left alone. The
// set is worked out here, by the thread that makes the pool: a worker may start only during a
// later rknn_run, which must not allocate.
class FastCoreAffinity {
 public:
  FastCoreAffinity() {
#if defined(__linux__)
    CPU_ZERO(&set_);
    const std::vector<int>& preferred = preferred_cpus();
    if (preferred.empty() || preferred.size() == allowed_cpus().size()) return;
    for (int cpu : preferred) CPU_SET(cpu, &set_);
    active_ = true;
#endif
  }
  void apply_to_current_thread() const {
#if defined(__linux__)
    if (active_) pthread_setaffinity_np(pthread_self(), sizeof(set_), &set_);  // best effort
#endif
  }

 private:
#if defined(__linux__)
  cpu_set_t set_;
#endif
  bool active_ = false;
};

uint32_t generation_of(uint64_t claim) {
  return static_cast<uint32_t>(claim >> 32);
}

// The index of a closed job's claim word: above any task count.
constexpr uint64_t kClosed = 0xffffffffu;

// How long an idle worker polls for the next job before it sleeps: a model runs its
// parallel kernels back to back with short serial ops in between, and a futex wake-up costs
// tens of microseconds.
constexpr auto kWorkerSpin = std::chrono::microseconds(100);

// Claims per thread's share of a job's remaining tasks (ThreadPool::claim_chunk): on two
// threads a chunk is 1/16 of what is left, so the chunks still running at the end are single
// tasks, and a depthwise layer of 960 channels takes 88 claims instead of 960 (each a
// compare-exchange on a line the other thread also writes).
constexpr size_t kClaimsPerShare = 8;

}  // namespace

ThreadPool::ThreadPool(size_t thread_count)
    : thread_count_(thread_count < 1 ? 1 : thread_count), scratch_(thread_count_) {
  workers_.reserve(thread_count_ - 1);
  const FastCoreAffinity affinity;
  for (size_t thread = 1; thread < thread_count_; ++thread) {
    workers_.emplace_back([this, thread, affinity] {
      affinity.apply_to_current_thread();
      worker_main(thread);
    });
  }
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(sleep_mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  for (std::thread& worker : workers_) worker.join();
}

void ThreadPool::reserve_scratch(size_t bytes) {
  for (AlignedBuffer& buffer : scratch_) {
    if (buffer.size() < bytes) buffer = AlignedBuffer(bytes);
  }
}

uint8_t* ThreadPool::scratch(size_t thread, size_t bytes) {
  AlignedBuffer& buffer = scratch_[thread];
  if (buffer.size() < bytes) buffer = AlignedBuffer(bytes);
  return buffer.data();
}

ThreadPool* ThreadPool::current() {
  return bound_pool;
}

ThreadPool& ThreadPool::current_or_serial() {
  if (bound_pool) return *bound_pool;
  thread_local ThreadPool serial(1);
  return serial;
}

size_t ThreadPool::default_thread_count() {
  static const size_t count = [] {
    if (const char* text = std::getenv("ORKNN_CPU_THREADS")) {
      const long requested = std::strtol(text, nullptr, 10);
      if (requested > 0) return static_cast<size_t>(requested > 64 ? 64 : requested);
    }
    // The fast cores only on big.LITTLE CPUs (a fork-join kernel waits for its slowest
    // thread), else every CPU the process may run on.
    size_t cpus = preferred_cpus().size();
    if (cpus == 0) cpus = std::thread::hardware_concurrency();
    if (cpus < 1) cpus = 1;
    return cpus > 8 ? size_t{8} : cpus;
  }();
  return count;
}

ThreadPool::Scope::Scope(ThreadPool* pool) : previous_(bound_pool) {
  bound_pool = pool;
}
ThreadPool::Scope::~Scope() {
  bound_pool = previous_;
}

void ThreadPool::run(size_t count, Invoke invoke, void* context) {
  assert(count < kClosed);
  if (running_task.pool == this || thread_count_ == 1 || count == 1) {
    // Nested in one of our tasks (its workers are busy), or nothing to share: run inline on
    // the calling thread's own index.
    const size_t thread = running_task.pool == this ? running_task.thread : 0;
    for (size_t index = 0; index < count; ++index) invoke(context, index, thread);
    return;
  }
  std::lock_guard<std::mutex> submit(submit_mutex_);
  const uint32_t previous = generation_of(claim_.load());
  // Close the previous job before rewriting the job fields: a worker still in it may have read
  // its claim word and then the new count, and its exchange must fail. These accesses are
  // sequentially consistent so that reading the new count implies seeing the closed word.
  claim_.store(static_cast<uint64_t>(previous) << 32 | kClosed);
  job_invoke_.store(invoke);
  job_context_.store(context);
  job_count_.store(count);
  finished_.store(0);
  const uint32_t generation = previous + 1;
  {
    std::lock_guard<std::mutex> lock(sleep_mutex_);
    claim_.store(static_cast<uint64_t>(generation) << 32);
  }
  wake_.notify_all();
  work(generation, 0);
  // Every task has been claimed; wait for the ones other threads still run.
  for (unsigned spins = 0; finished_.load(std::memory_order_acquire) != count; ++spins) {
    if (spins < 4096) {
      cpu_relax();
    } else {
      std::this_thread::yield();
    }
  }
}

size_t ThreadPool::claim_chunk(size_t remaining) const {
  // Guided scheduling: an eighth of each thread's fair share of what is left, so the chunks
  // still in flight when the job runs out are small and the threads finish together.
  const size_t chunk = remaining / (kClaimsPerShare * thread_count_);
  return chunk > 0 ? chunk : 1;
}

void ThreadPool::work(uint32_t generation, size_t thread) {
  const RunningTask outer = running_task;
  running_task = RunningTask{this, thread};
  uint64_t claim = claim_.load();
  while (generation_of(claim) == generation) {
    const size_t index = static_cast<uint32_t>(claim);
    // Read after claim_: if the job changed since, the exchange below fails (run() closed the
    // old claim word before it stored the new count).
    const size_t count = job_count_.load();
    if (index >= count) break;
    const size_t chunk = claim_chunk(count - index);
    if (!claim_.compare_exchange_weak(claim, claim + chunk)) continue;  // `claim` is reloaded
    // Tasks [index, index + chunk) of this job are ours, so the job (and its fields) outlives
    // this call.
    const Invoke invoke = job_invoke_.load();
    void* const context = job_context_.load();
    for (size_t task = index; task < index + chunk; ++task) invoke(context, task, thread);
    finished_.fetch_add(chunk, std::memory_order_release);
    claim = claim_.load();
  }
  running_task = outer;
}

void ThreadPool::worker_main(size_t thread) {
  uint32_t seen = 0;
  for (;;) {
    uint32_t generation = generation_of(claim_.load(std::memory_order_acquire));
    if (generation == seen) {
      const auto spin_until = std::chrono::steady_clock::now() + kWorkerSpin;
      for (unsigned spins = 1; generation == seen; ++spins) {
        cpu_relax();
        generation = generation_of(claim_.load(std::memory_order_acquire));
        if (spins % 64 == 0 && std::chrono::steady_clock::now() > spin_until) break;
      }
    }
    if (generation == seen) {
      std::unique_lock<std::mutex> lock(sleep_mutex_);
      wake_.wait(lock, [&] {
        return stopping_ || generation_of(claim_.load(std::memory_order_acquire)) != seen;
      });
      if (stopping_) return;
      generation = generation_of(claim_.load(std::memory_order_acquire));
    }
    seen = generation;
    work(generation, thread);
  }
}

}  // namespace orknn
