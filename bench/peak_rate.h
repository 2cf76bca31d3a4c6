// This machine's arithmetic peak, measured at run time: the rates the kernel benchmark's
// "of peak" columns divide by. A hard-coded figure is only right for the machine it was taken
// on (the CI machines are Zen3 with AVX2, a developer's may be Zen4 with AVX-512 and VNNI).
#pragma once

#include <string>
#include <vector>

namespace orknn::bench {

struct PeakRate {
  std::string instructions;  // what the loop runs, e.g. "AVX2 vfmadd231ps ymm"
  bool integer;              // int8/int16 multiply-accumulate (GOPS) or float32 FMA (GFLOPS)
  double per_core;           // G operations per second, one thread (multiply and add: 2 ops)
};

// One register-only loop per instruction set this CPU runs (checked at run time): independent
// accumulator chains, enough to keep every multiply-accumulate unit busy, no memory access.
// Each rate is the best of a few repetitions by the thread's CPU time, so other processes
// taking the core do not lower it.
std::vector<PeakRate> measure_peak_rates();

}  // namespace orknn::bench
