// A small fork-join thread pool for the CPU kernels, one per context (exec::Session), plus the
// per-thread scratch memory the kernels pack their operands into.
//
//   ThreadPool pool(2);                       // the calling thread + 1 worker
//   pool.parallel_for(tiles, [&](size_t tile, size_t thread) { ... });
//
// Policy (docs/cpu-kernels.md): every context owns a pool of ORKNN_CPU_THREADS threads (default:
// the online CPUs, at most 8); contexts never share workers, so contexts run from different app
// threads do not wait on each other. The thread that calls parallel_for always works too, so a
// pool of one thread has no worker at all.
//
// Thread safety: parallel_for may be called from any thread; concurrent calls on one pool are
// serialised. A task that calls parallel_for on the pool it runs on gets its loop run inline.
// reserve_scratch must not run concurrently with parallel_for.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <thread>
#include <type_traits>
#include <vector>

#include "core/aligned_buffer.h"

namespace orknn {

class ThreadPool {
 public:
  // thread_count >= 1 counts the calling thread: thread_count - 1 workers are started.
  explicit ThreadPool(size_t thread_count);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  size_t thread_count() const { return thread_count_; }

  // Runs task(index, thread) for every index in [0, count) and returns when all have finished.
  // `thread` < thread_count() identifies the executing thread (0 is the caller), so tasks can
  // use scratch(thread). Indices are handed out dynamically in chunks of consecutive indices
  // that shrink as the job runs out (claim_chunk): one per claim while few are left, so a short
  // task list (a convolution's blocks) is shared task by task, and a long one (a depthwise
  // layer's channels) costs a few claims instead of one per index. The calling thread claims
  // from the front of [0, count), the workers from the back (each chunk runs in increasing
  // order), so on two threads each keeps to one end of every kernel's output.
  template <typename Task>
  void parallel_for(size_t count, Task&& task) {
    if (count == 0) return;
    auto invoke = [](void* context, size_t index, size_t thread) {
      (*static_cast<std::remove_reference_t<Task>*>(context))(index, thread);
    };
    run(count, invoke, const_cast<void*>(static_cast<const void*>(&task)));
  }

  // The task the calling thread will most likely run after task `index` of the parallel_for it
  // is running, for a kernel that prefetches that task's operands: the next index of the
  // chunk it claimed, else where its next claim will most likely start (the caller claims
  // upward from the front; a worker's next chunk ends where its last one began, and the last
  // chunks are single tasks). Only a guess: it can be another thread's task or past either end
  // (then it wraps to a large value), so callers check it against their task count. Outside a
  // parallel_for's task, and in loops run inline, index + 1.
  static size_t likely_next_index(size_t index);

  // Makes every thread's scratch at least `bytes` long (kernels call this when they are built,
  // so runs do not allocate).
  void reserve_scratch(size_t bytes);
  // Thread `thread`'s scratch, 64-byte aligned, at least `bytes` long (grown here if a kernel
  // did not reserve it: an allocation, which only a first run should see). Contents are
  // undefined on entry; every kernel run may overwrite it. Null if allocation failed.
  uint8_t* scratch(size_t thread, size_t bytes);

  // The pool bound to the calling thread by a Scope, or null.
  static ThreadPool* current();
  // current(), or else a pool of one thread private to the calling thread (kernels run
  // outside a session, as in kernel tests, still get scratch memory).
  static ThreadPool& current_or_serial();
  // ORKNN_CPU_THREADS if set to a positive number (read once), else the CPUs this process may
  // run on, at most 8; on big.LITTLE CPUs only the fast ones (core/cpu_topology.h), where the
  // workers are also kept (ORKNN_CPU_BIG_CORES=0 turns that off).
  static size_t default_thread_count();

  // Binds a pool to the calling thread for the scope's lifetime (nests; restores the previous).
  class Scope {
   public:
    explicit Scope(ThreadPool* pool);
    ~Scope();
    Scope(const Scope&) = delete;
    Scope& operator=(const Scope&) = delete;

   private:
    ThreadPool* previous_;
  };

 private:
  using Invoke = void (*)(void* context, size_t index, size_t thread);
  class WorkerPlacement;  // which CPUs the workers use (thread_pool.cc)

  void run(size_t count, Invoke invoke, void* context);
  // One job of at most kMaxJobTasks tasks, indices first + [0, count).
  void run_job(size_t first, size_t count, Invoke invoke, void* context);
  // How many of a job's `remaining` unclaimed tasks one claim takes.
  size_t claim_chunk(size_t remaining) const;
  // Claims and runs tasks of job `generation` until none is left.
  void work(uint32_t generation, size_t thread);
  void worker_main(size_t thread, const WorkerPlacement& placement);

  const size_t thread_count_;
  std::vector<std::thread> workers_;
  std::vector<AlignedBuffer> scratch_;

  // The current job. `claim_` packs (generation, front, back): the tasks not yet claimed are
  // [front, back). A thread may run tasks of generation g only after moving claim_'s front up
  // or its back down past them, so a worker that wakes late can never run a task of a finished
  // job. Between jobs the word is (g, 0, 0).
  // The claim word, the finished count and the job fields each have a cache line: every claim
  // and every finished chunk writes its line, and the other thread's next claim must not
  // have to fetch the line it just wrote for a different reason (false sharing).
  alignas(64) std::atomic<uint64_t> claim_{0};
  alignas(64) std::atomic<size_t> finished_{0};
  alignas(64) std::atomic<size_t> job_first_{0};
  std::atomic<Invoke> job_invoke_{nullptr};
  std::atomic<void*> job_context_{nullptr};
  // Where run() was called, or -1 (WorkerPlacement).
  std::atomic<int> job_caller_cpu_{-1};
  // From a job's start until its last task has finished (worker_main's spin).
  std::atomic<bool> job_running_{false};

  std::mutex submit_mutex_;  // one job at a time
  std::mutex sleep_mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;  // guarded by sleep_mutex_
};

}  // namespace orknn
