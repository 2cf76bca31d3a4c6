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

// The pool whose task the calling thread is running (for nested parallel_for), its index, and
// the chunk of tasks it claimed (ThreadPool::likely_next_index; empty in loops run inline).
struct RunningTask {
  const ThreadPool* pool = nullptr;
  size_t thread = 0;
  size_t chunk_begin = 0;
  size_t chunk_end = 0;
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

// The claim word (ThreadPool::claim_): a job's generation, and the front and back of its
// unclaimed tasks [front, back).
constexpr unsigned kIndexBits = 20;
constexpr uint64_t kIndexMask = (uint64_t{1} << kIndexBits) - 1;
constexpr uint32_t kGenerationMask = (uint32_t{1} << (64 - 2 * kIndexBits)) - 1;
// More tasks than a claim word holds run as consecutive jobs.
constexpr size_t kMaxJobTasks = kIndexMask;

uint64_t claim_word(uint32_t generation, size_t front, size_t back) {
  return static_cast<uint64_t>(generation) << (2 * kIndexBits) |
         static_cast<uint64_t>(front) << kIndexBits | back;
}
uint32_t generation_of(uint64_t claim) {
  return static_cast<uint32_t>(claim >> (2 * kIndexBits));
}
size_t front_of(uint64_t claim) {
  return static_cast<size_t>(claim >> kIndexBits & kIndexMask);
}
size_t back_of(uint64_t claim) {
  return static_cast<size_t>(claim & kIndexMask);
}

// How long an idle worker polls for the next job before it sleeps: a model runs its
// parallel kernels back to back with short serial ops in between, and a futex wake-up costs
// tens of microseconds.
constexpr auto kWorkerSpin = std::chrono::microseconds(100);
// How long a worker polls at most while the job it ran out of is still running (its caller
// finishing the last tasks) before it sleeps until the next job.
constexpr auto kLongestPoll = std::chrono::milliseconds(2);

// Claims per thread's share of a job's remaining tasks (ThreadPool::claim_chunk): on two
// threads a chunk is 1/16 of what is left, so the chunks still running at the end are single
// tasks, and a depthwise layer of 960 channels takes 88 claims instead of 960 (each a
// compare-exchange on a line the other thread also writes).
constexpr size_t kClaimsPerShare = 8;

}  // namespace

// Where the workers run. On big.LITTLE CPUs they are kept on the fast cores
// (core/cpu_topology.h); the calling thread is the application's and is left alone.
//
// A worker must also not share a core with the calling thread: both spin while a job runs, so
// on one core they take turns and two threads run slower than one. Linux puts them together
// more often than one would think: a woken thread may be placed on its waker's CPU (in a VM,
// whenever the other vCPU looks busy to the guest because the host preempted it), and the
// load balancer then leaves it there for milliseconds because it is "cache hot". Measured on
// this project's 2-vCPU development VM: the first 8-10 runs of a two-thread model had the
// worker on the caller's CPU in about a third of the kernels and took 1.5x the one-thread
// time. So a worker that finds itself on the caller's CPU when a job starts moves off it, by
// narrowing its own affinity to the other allowed CPUs (one system call, only on a collision).
//
// The sets are worked out here, by the thread that makes the pool: a worker may start or move
// only during a later rknn_run, which must not allocate.
class ThreadPool::WorkerPlacement {
 public:
  WorkerPlacement() {
#if defined(__linux__)
    CPU_ZERO(&set_);
    const std::vector<int>& preferred = preferred_cpus();
    for (int cpu : preferred) CPU_SET(cpu, &set_);
    cpu_count_ = preferred.size();
    restricted_ = !preferred.empty() && preferred.size() != allowed_cpus().size();
#endif
  }

  void apply_to_current_thread() const {
#if defined(__linux__)
    if (restricted_) pthread_setaffinity_np(pthread_self(), sizeof(set_), &set_);  // best effort
#endif
  }

  // The CPU the calling thread runs on, or -1 where that cannot be known.
  static int current_cpu() {
#if defined(__linux__)
    return sched_getcpu();
#else
    return -1;
#endif
  }

  // Called by a worker when a job starts: if it runs on `caller_cpu`, it restricts itself to
  // the other CPUs of its set (the system call migrates it at once). Best effort; a worker
  // that cannot move just shares the core.
  void keep_off(int caller_cpu) const {
#if defined(__linux__)
    if (caller_cpu < 0 || cpu_count_ < 2 || current_cpu() != caller_cpu) return;
    if (caller_cpu >= CPU_SETSIZE || !CPU_ISSET(caller_cpu, &set_)) return;
    cpu_set_t others = set_;
    CPU_CLR(caller_cpu, &others);
    // Narrowing the mask migrates the thread now; widening it again right after does not
    // move it back, and leaves the scheduler free to place it later (a pinned worker would
    // wait for its one CPU while another is free, and on a busy machine that costs more).
    if (pthread_setaffinity_np(pthread_self(), sizeof(others), &others) == 0) {
      pthread_setaffinity_np(pthread_self(), sizeof(set_), &set_);
    }
#else
    (void)caller_cpu;
#endif
  }

 private:
#if defined(__linux__)
  cpu_set_t set_;
  size_t cpu_count_ = 0;
#endif
  bool restricted_ = false;
};

ThreadPool::ThreadPool(size_t thread_count)
    : thread_count_(thread_count < 1 ? 1 : thread_count), scratch_(thread_count_) {
  workers_.reserve(thread_count_ - 1);
  const WorkerPlacement placement;
  for (size_t thread = 1; thread < thread_count_; ++thread) {
    workers_.emplace_back([this, thread, placement] {
      placement.apply_to_current_thread();
      worker_main(thread, placement);
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
  if (running_task.pool == this || thread_count_ == 1 || count == 1) {
    // Nested in one of our tasks (its workers are busy), or nothing to share: run inline on
    // the calling thread's own index.
    const size_t thread = running_task.pool == this ? running_task.thread : 0;
    // Its indices are not the outer task's chunk (likely_next_index).
    const RunningTask outer = running_task;
    running_task.chunk_begin = running_task.chunk_end = 0;
    for (size_t index = 0; index < count; ++index) invoke(context, index, thread);
    running_task = outer;
    return;
  }
  std::lock_guard<std::mutex> submit(submit_mutex_);
  for (size_t first = 0; first < count; first += kMaxJobTasks) {
    run_job(first, std::min(kMaxJobTasks, count - first), invoke, context);
  }
}

void ThreadPool::run_job(size_t first, size_t count, Invoke invoke, void* context) {
  const uint32_t previous = generation_of(claim_.load());
  // Close the previous job before rewriting the job fields: a worker still in it may hold its
  // claim word, and its exchange must fail. These accesses are sequentially consistent so that
  // a worker that reads the new claim word also reads the new fields.
  claim_.store(claim_word(previous, 0, 0));
  job_invoke_.store(invoke);
  job_context_.store(context);
  job_first_.store(first);
  job_caller_cpu_.store(WorkerPlacement::current_cpu());
  job_running_.store(true, std::memory_order_relaxed);
  finished_.store(0);
  const uint32_t generation = (previous + 1) & kGenerationMask;
  {
    std::lock_guard<std::mutex> lock(sleep_mutex_);
    claim_.store(claim_word(generation, 0, count));
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
  job_running_.store(false, std::memory_order_relaxed);
}

size_t ThreadPool::likely_next_index(size_t index) {
  const RunningTask& task = running_task;
  const bool in_chunk = task.chunk_begin <= index && index < task.chunk_end;
  if (!in_chunk || index + 1 < task.chunk_end || task.thread == 0) return index + 1;
  return task.chunk_begin - 1;
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
  // The calling thread claims from the front of the task list and the workers from the back,
  // so on two threads each runs one end of it, the split point set by who finishes first.
  // Consecutive kernels split their outputs the same way (rows, then columns), so a thread
  // mostly reads what it wrote in the kernel before: where the two cores have separate caches
  // (this project's development VM: 330 ns for a cache line's round trip between them), data
  // the other core wrote costs a cross-core transfer per line.
  const bool from_front = thread == 0;
  uint64_t claim = claim_.load();
  while (generation_of(claim) == generation) {
    const size_t front = front_of(claim);
    const size_t back = back_of(claim);
    if (front >= back) break;
    const size_t chunk = claim_chunk(back - front);
    const uint64_t claimed =
        from_front ? claim + (static_cast<uint64_t>(chunk) << kIndexBits) : claim - chunk;
    if (!claim_.compare_exchange_weak(claim, claimed)) continue;  // `claim` is reloaded
    // These tasks of this job are ours, so the job (and its fields) outlives this call.
    const size_t begin = job_first_.load() + (from_front ? front : back - chunk);
    const Invoke invoke = job_invoke_.load();
    void* const context = job_context_.load();
    running_task.chunk_begin = begin;
    running_task.chunk_end = begin + chunk;
    for (size_t task = begin; task < begin + chunk; ++task) invoke(context, task, thread);
    finished_.fetch_add(chunk, std::memory_order_release);
    claim = claim_.load();
  }
  running_task = outer;
}

void ThreadPool::worker_main(size_t thread, const WorkerPlacement& placement) {
  uint32_t seen = 0;
  for (;;) {
    uint32_t generation = generation_of(claim_.load(std::memory_order_acquire));
    if (generation == seen) {
      const auto started = std::chrono::steady_clock::now();
      auto spin_until = started + kWorkerSpin;
      for (unsigned spins = 1; generation == seen; ++spins) {
        cpu_relax();
        generation = generation_of(claim_.load(std::memory_order_acquire));
        if (spins % 64 != 0) continue;
        const auto now = std::chrono::steady_clock::now();
        // While the caller still runs tasks of the job this worker ran out of, the next job
        // follows as soon as it finishes: the idle time counts from the job's end. (Waking
        // a sleeping worker cost 35 us in the caller and 50 us before the worker's first
        // task on the development VM, more than some kernels take.) But the poll gives its
        // CPU up each time, and sleeps after kLongestPoll: under SCHED_FIFO or SCHED_RR
        // nothing takes the CPU from a polling worker, and the caller it waits for may be
        // waiting for that very CPU (with a pool per application thread, as the converter's
        // calibration runs, every CPU can hold such a worker: test_real_time_workers_yield).
        if (job_running_.load(std::memory_order_relaxed) && now - started < kLongestPoll) {
          spin_until = now + kWorkerSpin;
          std::this_thread::yield();
        } else if (now > spin_until) {
          break;
        }
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
    // May be a later job's CPU if this one has already finished: harmless, its work() runs
    // nothing.
    placement.keep_off(job_caller_cpu_.load());
    work(generation, thread);
  }
}

}  // namespace orknn
