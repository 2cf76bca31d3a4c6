// The CPU device's optimized Conv, Gemm and MatMul kernels (librknnrt/devices/cpu/optimized/)
// on real one-node graphs: built from the node's tensors (constant weights packed at build,
// scratch reserved in the bound pool), run through the CpuKernel interface, compared with the
// reference; and the whole registry path (build_cpu_kernel) with each variant forced, which must
// agree with the forced reference (exactly for int8).
#include <cstring>
#include <memory>

#include "common/op_test_harness.h"
#include "core/thread_pool.h"
#include "devices/cpu/ops/concat_copies.h"
#include "devices/cpu/optimized/optimized_kernels.h"
#include "dispatch.h"
#include "kernels_optimized/optimized_test_support.h"
#include "reference/convolution.h"
#include "reference/gemm.h"

// cmocka comes last (its macros clash with standard headers) and needs these first.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
extern "C" {
#include <cmocka.h>
}

namespace {

using namespace orknn;
using namespace orknn::testing;
namespace reference = kernels::reference;
namespace optimized = devices::cpu::optimized;
using kernels::cpu::KernelVariant;

graph::Quantization per_tensor(float scale, int32_t zero_point) {
  return {{scale}, {zero_point}, 0};
}

devices::cpu::KernelBuildContext context_of(const graph::Graph& g) {
  const graph::Node& node = g.nodes[0];
  devices::cpu::KernelBuildContext context{node, {}, {&g.tensor(node.outputs[0])}};
  for (size_t i = 0; i < node.inputs.size(); ++i) {
    context.inputs.push_back(node.has_input(i) ? &g.tensor(node.inputs[i]) : nullptr);
  }
  return context;
}

// Conv 1x6x9x11 -> 10 channels, 3x3, stride 1, pads 1, Relu fused: X, W (constant), B.
const int64_t kC = 6, kH = 9, kW = 11, kM = 10;

reference::Conv2DShape conv_shape() {
  reference::Conv2DShape shape;
  shape.input_channels = kC;
  shape.output_channels = kM;
  reference::Window2D& w = shape.window;
  w.input_height = w.output_height = kH;
  w.input_width = w.output_width = kW;
  w.kernel_height = w.kernel_width = 3;
  w.pad_top = w.pad_left = w.pad_bottom = w.pad_right = 1;
  return shape;
}

Attributes conv_attributes() {
  return {{"kernel_shape", attr_ints({3, 3})}, {"pads", attr_ints({1, 1, 1, 1})}};
}

void test_conv_hook_float(void**) {
  Random random(5);
  const std::vector<float> x = random.floats(kC * kH * kW);
  const std::vector<float> w = random.floats(kM * kC * 9);
  const std::vector<float> b = random.floats(kM);
  const std::vector<StoredTensor> inputs{
      stored("x", DataType::kFloat32, {1, kC, kH, kW}, x),
      stored("w", DataType::kFloat32, {kM, kC, 3, 3}, w, {}, true),
      stored("b", DataType::kFloat32, {kM}, b, {}, true)};
  Result<graph::Graph> graph =
      single_node_graph("Conv", inputs, conv_attributes(), {{DataType::kFloat32, {}}});
  assert_true(graph.ok());
  const devices::cpu::KernelBuildContext context = context_of(graph.value());
  reference::FusedActivation relu;
  relu.kind = reference::FusedActivation::Kind::kRelu;
  std::vector<float> expected(kM * kH * kW);
  reference::conv2d(conv_shape(), relu, x.data(), w.data(), b.data(), expected.data());

  {
    kernels::cpu::ScopedKernelVariant force(KernelVariant::kReference);
    assert_true(optimized::make_conv2d_kernel(context, conv_shape(), relu) == nullptr);
  }
  ThreadPool pool(2);
  ThreadPool::Scope scope(&pool);
  for (KernelVariant variant : optimized_variants()) {
    kernels::cpu::ScopedKernelVariant force(variant);
    std::unique_ptr<devices::cpu::CpuKernel> kernel =
        optimized::make_conv2d_kernel(context, conv_shape(), relu);
    assert_true(kernel != nullptr);
    std::vector<float> y(expected.size(), -1.0f);
    // The weights argument is not read: they were packed from the graph's constant.
    const void* run_inputs[] = {x.data(), nullptr, b.data()};
    void* run_outputs[] = {y.data()};
    assert_true(kernel->run(run_inputs, run_outputs).ok());
    const std::string mismatch = compare_floats(y, expected, 1e-5);
    if (!mismatch.empty()) fail_msg("%s: %s", kernel_variant_name(variant), mismatch.c_str());
  }
}

void test_conv_hook_int8(void**) {
  Random random(6);
  const std::vector<int8_t> x = random.codes(kC * kH * kW);
  const std::vector<int8_t> w = random.codes(kM * kC * 9);
  const std::vector<int32_t> b = random.ints(kM, -5000, 5000);
  reference::Int8Requantization q;
  q.input_zero_point = 4;
  q.weight_zero_points.assign(kM, 0);
  q.multipliers.assign(kM, 2e-4f);
  q.output_zero_point = -7;
  q.output_minimum = -7;  // a fused Relu
  const std::vector<StoredTensor> inputs{
      stored("x", DataType::kInt8, {1, kC, kH, kW}, x, per_tensor(0.1f, 4)),
      stored("w", DataType::kInt8, {kM, kC, 3, 3}, w, per_tensor(0.01f, 0), true),
      stored("b", DataType::kInt32, {kM}, b, per_tensor(0.001f, 0), true)};
  Result<graph::Graph> graph = single_node_graph("Conv", inputs, conv_attributes(),
                                                 {{DataType::kInt8, per_tensor(5.0f, -7)}});
  assert_true(graph.ok());
  const devices::cpu::KernelBuildContext context = context_of(graph.value());
  std::vector<int8_t> expected(kM * kH * kW);
  reference::conv2d_int8(conv_shape(), q, x.data(), w.data(), b.data(), expected.data());
  for (KernelVariant variant : int8_gemm_variants()) {
    kernels::cpu::ScopedKernelVariant force(variant);
    std::unique_ptr<devices::cpu::CpuKernel> kernel =
        optimized::make_conv2d_int8_kernel(context, conv_shape(), q);
    assert_true(kernel != nullptr);
    std::vector<int8_t> y(expected.size(), 0x55);
    const void* run_inputs[] = {x.data(), nullptr, b.data()};
    void* run_outputs[] = {y.data()};
    assert_true(kernel->run(run_inputs, run_outputs).ok());  // no bound pool: serial
    const std::string mismatch = compare_exact(y, expected);
    if (!mismatch.empty()) fail_msg("%s: %s", kernel_variant_name(variant), mismatch.c_str());
  }
}

void test_gemm_and_matmul_hooks(void**) {
  Random random(7);
  const int64_t m = 3, k = 40, n = 21;
  const std::vector<float> a = random.floats(m * k);
  const std::vector<float> b = random.floats(k * n);
  const std::vector<float> c = random.floats(n);
  reference::GemmParams params;
  params.m = m;
  params.n = n;
  params.k = k;
  params.c_column_stride = 1;
  const reference::FusedActivation none;
  std::vector<float> expected(m * n);
  reference::gemm(params, none, a.data(), b.data(), c.data(), expected.data());
  std::vector<float> expected_matmul(m * n);
  reference::MatMulParams matmul;
  matmul.m = m;
  matmul.n = n;
  matmul.k = k;
  reference::matmul(matmul, none, a.data(), b.data(), expected_matmul.data());

  const std::vector<StoredTensor> gemm_inputs{stored("a", DataType::kFloat32, {m, k}, a),
                                              stored("b", DataType::kFloat32, {k, n}, b, {}, true),
                                              stored("c", DataType::kFloat32, {n}, c, {}, true)};
  Result<graph::Graph> gemm =
      single_node_graph("Gemm", gemm_inputs, {}, {{DataType::kFloat32, {}}});
  assert_true(gemm.ok());
  const std::vector<StoredTensor> matmul_inputs{
      stored("a", DataType::kFloat32, {m, k}, a),
      stored("b", DataType::kFloat32, {k, n}, b, {}, true)};
  Result<graph::Graph> matmul_graph =
      single_node_graph("MatMul", matmul_inputs, {}, {{DataType::kFloat32, {}}});
  assert_true(matmul_graph.ok());

  for (KernelVariant variant : int8_gemm_variants()) {
    kernels::cpu::ScopedKernelVariant force(variant);
    auto gemm_kernel = optimized::make_gemm_kernel(context_of(gemm.value()), params, none);
    auto matmul_kernel =
        optimized::make_matmul_kernel(context_of(matmul_graph.value()), matmul, none);
    assert_true(gemm_kernel != nullptr);
    assert_true(matmul_kernel != nullptr);
    std::vector<float> y(m * n), y_matmul(m * n);
    const void* gemm_run_inputs[] = {a.data(), b.data(), c.data()};
    void* gemm_outputs[] = {y.data()};
    assert_true(gemm_kernel->run(gemm_run_inputs, gemm_outputs).ok());
    const void* matmul_run_inputs[] = {a.data(), b.data()};
    void* matmul_outputs[] = {y_matmul.data()};
    assert_true(matmul_kernel->run(matmul_run_inputs, matmul_outputs).ok());
    std::string mismatch = compare_floats(y, expected, 1e-5);
    if (!mismatch.empty()) fail_msg("gemm %s: %s", kernel_variant_name(variant), mismatch.c_str());
    mismatch = compare_floats(y_matmul, expected_matmul, 1e-5);
    if (!mismatch.empty()) {
      fail_msg("matmul %s: %s", kernel_variant_name(variant), mismatch.c_str());
    }
  }
}

// Runs `op_type` through the registry with `variant` forced.
StoredRun run_forced(KernelVariant variant, const std::string& op_type,
                     const std::vector<StoredTensor>& inputs, const Attributes& attributes,
                     const StoredOutput& output) {
  kernels::cpu::ScopedKernelVariant force(variant);
  ThreadPool pool(2);
  ThreadPool::Scope scope(&pool);
  return run_stored(op_type, inputs, attributes, {output});
}

void test_registry_variants_agree(void**) {
  Random random(8);
  // float32 and int8 versions of: a strided 3x3 Conv, a depthwise Conv, a Gemm (transB) and a
  // batched MatMul.
  const Attributes strided{{"kernel_shape", attr_ints({3, 3})},
                           {"strides", attr_ints({2, 2})},
                           {"pads", attr_ints({1, 0, 1, 1})}};
  const Attributes depthwise{{"kernel_shape", attr_ints({3, 3})},
                             {"pads", attr_ints({1, 1, 1, 1})},
                             {"group", attr_int(8)}};
  const Attributes transposed{{"transB", attr_int(1)}};
  struct NodeCase {
    const char* op_type;
    Attributes attributes;
    graph::Shape x, w, b;
  };
  const NodeCase cases[] = {
      {"Conv", strided, {1, 5, 13, 12}, {9, 5, 3, 3}, {9}},
      {"Conv", depthwise, {1, 8, 10, 17}, {8, 1, 3, 3}, {8}},
      {"Gemm", transposed, {4, 33}, {19, 33}, {19}},
      {"MatMul", {}, {2, 5, 7}, {7, 18}, {}},
  };
  for (const NodeCase& c : cases) {
    auto count = [](const graph::Shape& shape) {
      size_t elements = 1;
      for (int64_t d : shape) elements *= static_cast<size_t>(d);
      return elements;
    };
    // float32
    std::vector<StoredTensor> inputs{
        stored("x", DataType::kFloat32, c.x, random.floats(count(c.x))),
        stored("w", DataType::kFloat32, c.w, random.floats(count(c.w)), {}, true)};
    if (!c.b.empty()) {
      inputs.push_back(stored("b", DataType::kFloat32, c.b, random.floats(count(c.b)), {}, true));
    }
    const StoredRun expected = run_forced(KernelVariant::kReference, c.op_type, inputs,
                                          c.attributes, {DataType::kFloat32, {}});
    assert_true(expected.status.ok());
    // int8
    const graph::Quantization x_q = per_tensor(0.05f, 3);
    const int64_t channels = c.op_type == std::string("MatMul") ? c.w.back() : c.w[0];
    graph::Quantization w_q{std::vector<float>(static_cast<size_t>(channels), 0.01f),
                            std::vector<int32_t>(static_cast<size_t>(channels), 0),
                            c.op_type == std::string("MatMul") ? 1 : 0};
    graph::Quantization b_q{std::vector<float>(static_cast<size_t>(channels), 0.05f * 0.01f),
                            std::vector<int32_t>(static_cast<size_t>(channels), 0), 0};
    std::vector<StoredTensor> inputs8{
        stored("x", DataType::kInt8, c.x, random.codes(count(c.x)), x_q),
        stored("w", DataType::kInt8, c.w, random.codes(count(c.w)), w_q, true)};
    if (!c.b.empty()) {
      inputs8.push_back(
          stored("b", DataType::kInt32, c.b, random.ints(count(c.b), -3000, 3000), b_q, true));
    }
    const StoredOutput output8{DataType::kInt8, per_tensor(0.3f, -2)};
    const StoredRun expected8 =
        run_forced(KernelVariant::kReference, c.op_type, inputs8, c.attributes, output8);
    assert_true(expected8.status.ok());
    for (KernelVariant variant : int8_gemm_variants()) {
      const StoredRun run =
          run_forced(variant, c.op_type, inputs, c.attributes, {DataType::kFloat32, {}});
      assert_true(run.status.ok());
      const std::string mismatch = compare_floats(from_bytes<float>(run.outputs[0]),
                                                  from_bytes<float>(expected.outputs[0]), 1e-5);
      if (!mismatch.empty()) {
        fail_msg("%s float32 %s: %s", c.op_type, kernel_variant_name(variant), mismatch.c_str());
      }
      const StoredRun run8 = run_forced(variant, c.op_type, inputs8, c.attributes, output8);
      assert_true(run8.status.ok());
      const std::string mismatch8 = compare_exact(from_bytes<int8_t>(run8.outputs[0]),
                                                  from_bytes<int8_t>(expected8.outputs[0]));
      if (!mismatch8.empty()) {
        fail_msg("%s int8 %s: %s", c.op_type, kernel_variant_name(variant), mismatch8.c_str());
      }
    }
  }
}

// Add, Sub, Mul, Div through the registry (float32, and int8 through the float domain) with
// each variant forced: the same bits as the forced reference, for a per-channel constant, an
// equal-shape activation, a scalar and a broadcast the optimized kernel leaves to the reference.
void test_registry_binary_variants_agree(void**) {
  Random random(9);
  struct BinaryCase {
    graph::Shape a, b;
    bool constant_b;
  };
  const BinaryCase cases[] = {{{1, 6, 7, 9}, {1, 6, 1, 1}, true},
                              {{2, 3, 17}, {2, 3, 17}, false},
                              {{1, 33}, {1}, true},
                              {{2, 3, 4}, {2, 1, 4}, false}};
  auto count = [](const graph::Shape& shape) {
    size_t elements = 1;
    for (int64_t d : shape) elements *= static_cast<size_t>(d);
    return elements;
  };
  for (const char* op_type : {"Add", "Sub", "Mul", "Div"}) {
    for (const BinaryCase& c : cases) {
      std::vector<float> b_values = random.floats(count(c.b), 0.5f, 2.0f);
      const std::vector<StoredTensor> inputs{
          stored("a", DataType::kFloat32, c.a, random.floats(count(c.a))),
          stored("b", DataType::kFloat32, c.b, b_values, {}, c.constant_b)};
      const std::vector<StoredTensor> inputs8{
          stored("a", DataType::kInt8, c.a, random.codes(count(c.a)), per_tensor(0.05f, 3)),
          stored("b", DataType::kInt8, c.b, random.codes(count(c.b), 10, 127),
                 per_tensor(0.02f, -5), c.constant_b)};
      const StoredOutput output8{DataType::kInt8, per_tensor(0.1f, -2)};
      const StoredRun expected =
          run_forced(KernelVariant::kReference, op_type, inputs, {}, {DataType::kFloat32, {}});
      const StoredRun expected8 =
          run_forced(KernelVariant::kReference, op_type, inputs8, {}, output8);
      assert_true(expected.status.ok());
      assert_true(expected8.status.ok());
      for (KernelVariant variant : optimized_variants()) {
        const StoredRun run = run_forced(variant, op_type, inputs, {}, {DataType::kFloat32, {}});
        const StoredRun run8 = run_forced(variant, op_type, inputs8, {}, output8);
        assert_true(run.status.ok());
        assert_true(run8.status.ok());
        const std::string mismatch = compare_floats(from_bytes<float>(run.outputs[0]),
                                                    from_bytes<float>(expected.outputs[0]), 0.0);
        const std::string mismatch8 = compare_exact(from_bytes<int8_t>(run8.outputs[0]),
                                                    from_bytes<int8_t>(expected8.outputs[0]));
        if (!mismatch.empty() || !mismatch8.empty()) {
          fail_msg("%s %zu-d %s: float32 %s; int8 %s", op_type, c.a.size(),
                   kernel_variant_name(variant), mismatch.c_str(), mismatch8.c_str());
        }
      }
    }
  }
}

// MaxPool, AveragePool and GlobalAveragePool through the registry with each variant forced,
// against the forced reference: float32 (max exact, averages to rounding) and int8 (bit-exact;
// MaxPool on codes when input and output share a quantization, the float domain otherwise).
void test_registry_pooling_variants_agree(void**) {
  Random random(10);
  const Attributes window{{"kernel_shape", attr_ints({3, 3})},
                          {"strides", attr_ints({2, 2})},
                          {"pads", attr_ints({1, 1, 1, 0})}};
  struct PoolCase {
    const char* op_type;
    Attributes attributes;
    graph::Quantization output_quantization;
  };
  const graph::Quantization input_q = per_tensor(0.05f, 3);
  const PoolCase cases[] = {{"MaxPool", window, input_q},
                            {"MaxPool", window, per_tensor(0.07f, -9)},
                            {"AveragePool", window, input_q},
                            {"GlobalAveragePool", {}, per_tensor(0.02f, 1)},
                            // Fine enough that the average of 255 codes moves a code.
                            {"GlobalAveragePool", {}, per_tensor(0.002f, 1)}};
  const graph::Shape shape{2, 3, 17, 15};
  const size_t count = 2 * 3 * 17 * 15;
  for (const PoolCase& c : cases) {
    const std::vector<StoredTensor> inputs{
        stored("x", DataType::kFloat32, shape, random.floats(count))};
    const std::vector<StoredTensor> inputs8{
        stored("x", DataType::kInt8, shape, random.codes(count), input_q)};
    const StoredOutput output8{DataType::kInt8, c.output_quantization};
    const StoredRun expected = run_forced(KernelVariant::kReference, c.op_type, inputs,
                                          c.attributes, {DataType::kFloat32, {}});
    const StoredRun expected8 =
        run_forced(KernelVariant::kReference, c.op_type, inputs8, c.attributes, output8);
    assert_true(expected.status.ok());
    assert_true(expected8.status.ok());
    for (KernelVariant variant : optimized_variants()) {
      const StoredRun run =
          run_forced(variant, c.op_type, inputs, c.attributes, {DataType::kFloat32, {}});
      const StoredRun run8 = run_forced(variant, c.op_type, inputs8, c.attributes, output8);
      assert_true(run.status.ok());
      assert_true(run8.status.ok());
      const std::string mismatch = compare_floats(from_bytes<float>(run.outputs[0]),
                                                  from_bytes<float>(expected.outputs[0]), 1e-5);
      const std::string mismatch8 = compare_exact(from_bytes<int8_t>(run8.outputs[0]),
                                                  from_bytes<int8_t>(expected8.outputs[0]));
      if (!mismatch.empty() || !mismatch8.empty()) {
        fail_msg("%s %s: float32 %s; int8 %s", c.op_type, kernel_variant_name(variant),
                 mismatch.c_str(), mismatch8.c_str());
      }
    }
  }
}

}  // namespace

// Concat and Split of tensors large enough for the pool (devices/cpu/ops/concat_copies.h),
// through the registry on 2 threads, against the joined bytes computed here; and the copy plan
// itself: serial below the size bound or past the piece count, an empty operand skipped.
void test_concat_and_split_on_the_pool(void**) {
  Random random(11);
  const int64_t outer = 2, inner = 40 * 50;
  const std::vector<int64_t> sizes{17, 30, 5};  // runs of 136000, 240000, 40000 bytes
  std::vector<std::vector<float>> parts;
  std::vector<StoredTensor> inputs;
  for (size_t i = 0; i < sizes.size(); ++i) {
    parts.push_back(random.floats(static_cast<size_t>(outer * sizes[i] * inner)));
    inputs.push_back(stored("x" + std::to_string(i), DataType::kFloat32, {outer, sizes[i], 40, 50},
                            parts.back()));
  }
  std::vector<float> joined;
  for (int64_t o = 0; o < outer; ++o) {
    for (size_t i = 0; i < sizes.size(); ++i) {
      const size_t run = static_cast<size_t>(sizes[i] * inner);
      joined.insert(joined.end(), parts[i].begin() + static_cast<ptrdiff_t>(o * run),
                    parts[i].begin() + static_cast<ptrdiff_t>((o + 1) * run));
    }
  }
  ThreadPool pool(2);
  ThreadPool::Scope scope(&pool);
  const StoredRun concat = run_stored("Concat", inputs, {{"axis", attr_int(1)}}, {{}});
  assert_true(concat.status.ok());
  assert_true(from_bytes<float>(concat.outputs[0]) == joined);
  const StoredRun split =
      run_stored("Split", {stored("joined", DataType::kFloat32, {outer, 52, 40, 50}, joined)},
                 {{"axis", attr_int(1)}, {"split", attr_ints(sizes)}}, {{}, {}, {}});
  assert_true(split.status.ok());
  for (size_t i = 0; i < sizes.size(); ++i)
    assert_true(from_bytes<float>(split.outputs[i]) == parts[i]);

  // The plan: pieces of at most 64 KiB per run, none for small or many-run layouts.
  kernels::reference::ConcatParams params;
  params.outer = outer;
  params.inner = inner;
  params.axis_sizes = {17, 0, 30, 5};
  devices::cpu::ConcatCopies copies(sizeof(float), params);
  assert_int_equal(copies.piece_count(), 2 * (3 + 4 + 1));
  params.axis_sizes = {1, 1};
  assert_int_equal(devices::cpu::ConcatCopies(sizeof(float), params).piece_count(), 0);
  params.outer = 5000;
  params.inner = 8;
  assert_int_equal(devices::cpu::ConcatCopies(sizeof(float), params).piece_count(), 0);
  // The empty operand has no buffer; a split round trip on the pool restores the parts.
  std::vector<float> output(joined.size());
  const void* sources[] = {parts[0].data(), nullptr, parts[1].data(), parts[2].data()};
  copies.concat(sources, output.data());
  assert_true(output == joined);
  std::vector<std::vector<float>> back{std::vector<float>(parts[0].size()),
                                       {},
                                       std::vector<float>(parts[1].size()),
                                       std::vector<float>(parts[2].size())};
  void* targets[] = {back[0].data(), nullptr, back[2].data(), back[3].data()};
  copies.split(joined.data(), targets);
  assert_true(back[0] == parts[0] && back[2] == parts[1] && back[3] == parts[2]);
}

int main() {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_conv_hook_float),
      cmocka_unit_test(test_conv_hook_int8),
      cmocka_unit_test(test_gemm_and_matmul_hooks),
      cmocka_unit_test(test_registry_variants_agree),
      cmocka_unit_test(test_registry_binary_variants_agree),
      cmocka_unit_test(test_registry_pooling_variants_agree),
      cmocka_unit_test(test_concat_and_split_on_the_pool),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
