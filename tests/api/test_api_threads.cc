// Threading rules (docs/threading.md): calls on one context are serialised by the runtime;
// different contexts run in parallel; destroying a context another thread is using is safe.
#include <atomic>
#include <cmath>
#include <thread>
#include <vector>

#include "api/api_test_util.h"

using namespace orknn::api_testing;

namespace {

constexpr int kDepth = 4;
constexpr float kOffset = kDepth * 0.5f;

// One inputs_set / run / outputs_get / release cycle with a uniform input `value`. Returns the
// first output element, or NaN if any call failed or the output was not uniform.
float cycle(rknn_context context, float value) {
  float input_values[16];
  for (float& v : input_values) v = value;
  rknn_input input =
      make_input(0, input_values, sizeof(input_values), RKNN_TENSOR_FLOAT32, RKNN_TENSOR_UNDEFINED);
  if (rknn_inputs_set(context, 1, &input) != RKNN_SUCC) return NAN;
  if (rknn_run(context, nullptr) != RKNN_SUCC) return NAN;
  rknn_output output;
  std::memset(&output, 0, sizeof(output));
  output.want_float = 1;
  if (rknn_outputs_get(context, 1, &output, nullptr) != RKNN_SUCC) return NAN;
  const float* values = static_cast<const float*>(output.buf);
  float first = values[0];
  for (int i = 1; i < 16; ++i) {
    if (values[i] != first) first = NAN;
  }
  rknn_outputs_release(context, 1, &output);
  return first;
}

// 8 threads share 4 contexts, 200 cycles each. Two threads on one context may interleave their
// calls, so a thread may see the other's result, but never a failed call or a torn output.
void test_eight_threads_four_contexts(void**) {
  std::vector<rknn_context> contexts;
  for (int i = 0; i < 4; ++i) contexts.push_back(init_or_fail(build_chain_model(kDepth)));
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      const rknn_context context = contexts[t % 4];
      // The two threads of this context use values t and t + 4.
      const float mine = static_cast<float>(t), other = static_cast<float>((t + 4) % 8);
      for (int run = 0; run < 200; ++run) {
        const float result = cycle(context, mine);
        if (result != mine + kOffset && result != other + kOffset) failures++;
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (rknn_context context : contexts) assert_int_equal(rknn_destroy(context), RKNN_SUCC);
  assert_int_equal(failures.load(), 0);
}

// One context per thread: results are exact, and contexts made with rknn_dup_context too.
void test_context_per_thread_with_dup(void**) {
  rknn_context base = init_or_fail(build_chain_model(kDepth));
  std::vector<rknn_context> contexts(4);
  for (rknn_context& context : contexts)
    assert_int_equal(rknn_dup_context(&base, &context), RKNN_SUCC);
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int run = 0; run < 200; ++run) {
        const float value = static_cast<float>(t * 1000 + run);
        if (cycle(contexts[t], value) != value + kOffset) failures++;
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (rknn_context context : contexts) assert_int_equal(rknn_destroy(context), RKNN_SUCC);
  assert_int_equal(rknn_destroy(base), RKNN_SUCC);
  assert_int_equal(failures.load(), 0);
}

// A context destroyed while another thread is using it: that thread's later calls fail with
// RKNN_ERR_CTX_INVALID; nothing crashes.
void test_destroy_while_in_use(void**) {
  for (int round = 0; round < 20; ++round) {
    rknn_context context = init_or_fail(build_chain_model(kDepth));
    std::atomic<bool> started{false};
    std::atomic<int> unexpected{0};
    std::thread user([&] {
      for (int run = 0; run < 100; ++run) {
        started = true;
        const int status = rknn_run(context, nullptr);
        if (status != RKNN_SUCC && status != RKNN_ERR_CTX_INVALID) unexpected++;
      }
    });
    while (!started) std::this_thread::yield();
    assert_int_equal(rknn_destroy(context), RKNN_SUCC);
    user.join();
    assert_int_equal(unexpected.load(), 0);
  }
}

}  // namespace

// Memory objects made, bound and destroyed on several threads at once, some with contexts,
// some without (RKNN_MEM_FLAG_ALLOC_NO_CONTEXT): the live-object registry must stay consistent
// (TSan checks the locking in CI). (Destroyed objects are not looked up again here: another
// thread's new object may legitimately have the same address.)
void test_memory_objects_across_threads(void**) {
  const std::vector<uint8_t> model = build_chain_model(2);
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      rknn_context context = 0;
      std::vector<uint8_t> bytes = model;
      if (rknn_init(&context, bytes.data(), static_cast<uint32_t>(bytes.size()), 0, nullptr) !=
          RKNN_SUCC) {
        ++failures;
        return;
      }
      rknn_tensor_attr input{}, output{};
      input.index = output.index = 0;
      rknn_query(context, RKNN_QUERY_INPUT_ATTR, &input, sizeof(input));
      rknn_query(context, RKNN_QUERY_OUTPUT_ATTR, &output, sizeof(output));
      for (int i = 0; i < 40; ++i) {
        rknn_tensor_mem* in = rknn_create_mem(context, input.size);
        rknn_tensor_mem* out = rknn_create_mem2(0, output.size, RKNN_MEM_FLAG_ALLOC_NO_CONTEXT);
        if (!in || !out) {
          ++failures;
          break;
        }
        float* values = static_cast<float*>(in->virt_addr);
        for (int k = 0; k < 16; ++k) values[k] = static_cast<float>(t * 100 + i);
        if (rknn_set_io_mem(context, in, &input) != RKNN_SUCC ||
            rknn_set_io_mem(context, out, &output) != RKNN_SUCC ||
            rknn_run(context, nullptr) != RKNN_SUCC ||
            static_cast<const float*>(out->virt_addr)[15] != static_cast<float>(t * 100 + i) + 1) {
          ++failures;
        }
        rknn_destroy_mem(context, in);
        rknn_destroy_mem(0, out);
      }
      rknn_destroy(context);
    });
  }
  for (std::thread& thread : threads) thread.join();
  assert_int_equal(failures.load(), 0);
}

int main() {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_eight_threads_four_contexts),
      cmocka_unit_test(test_context_per_thread_with_dup),
      cmocka_unit_test(test_destroy_while_in_use),
      cmocka_unit_test(test_memory_objects_across_threads),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
