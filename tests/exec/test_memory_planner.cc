// The memory planner (exec/memory_planner.h): tensors alive at the same time never overlap, a
// Concat on host nodes gets its inputs placed inside its output, a Split its outputs inside its
// input and a Reshape its output on its input - only under the conditions the header lists.
#include <string>
#include <vector>

#include "exec/memory_planner.h"
#include "graph/fusion_chains.h"
#include "graph/graph.h"

// cmocka comes last (its macros clash with standard headers) and needs these first.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
extern "C" {
#include <cmocka.h>
}

namespace {

using namespace orknn;
using graph::Graph;
using graph::Shape;

int32_t add_tensor(Graph& g, const std::string& name, Shape shape,
                   DataType type = DataType::kFloat32) {
  graph::Tensor tensor;
  tensor.name = name;
  tensor.shape = std::move(shape);
  tensor.data_type = type;
  g.tensors.push_back(tensor);
  return static_cast<int32_t>(g.tensors.size() - 1);
}

void add_node(Graph& g, const std::string& op, std::vector<int32_t> inputs,
              std::vector<int32_t> outputs, int64_t axis = 1) {
  graph::Node node;
  node.name = op + std::to_string(g.nodes.size());
  node.op_type = op;
  node.inputs = std::move(inputs);
  node.outputs = std::move(outputs);
  if (op == "Concat") {
    graph::Attribute attribute;
    attribute.int_value = axis;
    node.attributes["axis"] = attribute;
  }
  g.nodes.push_back(std::move(node));
}

std::vector<Shape> shapes_of(const Graph& g) {
  std::vector<Shape> shapes;
  for (const graph::Tensor& tensor : g.tensors) shapes.push_back(tensor.shape);
  return shapes;
}

// x -> a, x -> b, concat(a, b) -> c, c -> y: YOLO's C3 join, 16 channels each of 4x4 floats.
struct JoinModel {
  Graph g;
  int32_t x, a, b, c, y;
};
JoinModel join_model(Shape piece = {1, 16, 4, 4}, int64_t axis = 1) {
  JoinModel m;
  Shape joined = piece;
  joined[static_cast<size_t>(axis)] *= 2;
  m.x = add_tensor(m.g, "x", piece);
  m.a = add_tensor(m.g, "a", piece);
  m.b = add_tensor(m.g, "b", piece);
  m.c = add_tensor(m.g, "c", joined);
  m.y = add_tensor(m.g, "y", joined);
  add_node(m.g, "Relu", {m.x}, {m.a});
  add_node(m.g, "Sigmoid", {m.x}, {m.b});
  add_node(m.g, "Concat", {m.a, m.b}, {m.c}, axis);
  add_node(m.g, "Relu", {m.c}, {m.y});
  m.g.inputs.push_back(graph::GraphInput{m.x, {}, {}, false, false});
  m.g.outputs.push_back(m.y);
  return m;
}

const std::vector<bool> kAllHost(4, true);

bool in_place(const JoinModel& m, const exec::MemoryPlan& plan) {
  return plan.offsets[m.a] == plan.offsets[m.c] &&
         plan.offsets[m.b] == plan.offsets[m.c] + 16 * 4 * 4 * 4;
}

void test_concat_inputs_placed_in_the_output(void**) {
  const JoinModel m = join_model();
  const exec::MemoryPlan plain = exec::plan_memory(m.g, shapes_of(m.g));
  assert_false(in_place(m, plain));
  const exec::MemoryPlan plan = exec::plan_memory(m.g, shapes_of(m.g), kAllHost);
  assert_true(in_place(m, plan));
  // a, b and c together take c's 2 KB instead of 4 KB.
  assert_true(plan.arena_bytes < plain.arena_bytes);
  assert_int_equal(plan.arena_bytes, 2048);
}

void test_concat_left_alone_when_it_must_copy(void**) {
  {  // not a host node
    const JoinModel m = join_model();
    assert_false(in_place(m, exec::plan_memory(m.g, shapes_of(m.g), {true, true, false, true})));
    assert_false(in_place(m, exec::plan_memory(m.g, shapes_of(m.g), {false, true, true, true})));
  }
  {  // a dimension before the axis is not 1: the pieces interleave
    const JoinModel m = join_model({1, 16, 4, 4}, 2);
    assert_false(in_place(m, exec::plan_memory(m.g, shapes_of(m.g), kAllHost)));
  }
  {  // an input of another quantization: the Concat converts
    JoinModel m = join_model();
    m.g.tensors[static_cast<size_t>(m.a)].quantization.scales = {0.5f};
    m.g.tensors[static_cast<size_t>(m.a)].quantization.zero_points = {0};
    assert_false(in_place(m, exec::plan_memory(m.g, shapes_of(m.g), kAllHost)));
  }
  {  // the second input would start off the 64-byte alignment (3 floats in)
    JoinModel m = join_model({1, 1, 1, 3}, 3);
    const exec::MemoryPlan plan = exec::plan_memory(m.g, shapes_of(m.g), kAllHost);
    assert_true(plan.offsets[m.a] != plan.offsets[m.c]);
  }
  {  // an input that is a graph output
    JoinModel m = join_model();
    m.g.outputs.push_back(m.b);
    assert_false(in_place(m, exec::plan_memory(m.g, shapes_of(m.g), kAllHost)));
  }
  {  // the same tensor twice
    JoinModel m = join_model();
    m.g.nodes[2].inputs = {m.a, m.a};
    const exec::MemoryPlan plan = exec::plan_memory(m.g, shapes_of(m.g), kAllHost);
    assert_true(plan.offsets[m.a] != plan.offsets[m.c]);
  }
}

// x -> r, split(r) -> s0, s1, s0 + s1 -> y: YOLOv8's C2f cut, 8 channels each of 4x4 floats.
void test_split_outputs_placed_in_the_input(void**) {
  Graph g;
  const int32_t x = add_tensor(g, "x", {1, 16, 4, 4});
  const int32_t r = add_tensor(g, "r", {1, 16, 4, 4});
  const int32_t s0 = add_tensor(g, "s0", {1, 8, 4, 4});
  const int32_t s1 = add_tensor(g, "s1", {1, 8, 4, 4});
  const int32_t y = add_tensor(g, "y", {1, 8, 4, 4});
  add_node(g, "Relu", {x}, {r});
  add_node(g, "Split", {r}, {s0, s1}, 1);
  g.nodes.back().attributes["axis"].int_value = 1;
  add_node(g, "Add", {s0, s1}, {y});
  g.inputs.push_back(graph::GraphInput{x, {}, {}, false, false});
  g.outputs.push_back(y);
  const exec::MemoryPlan plan = exec::plan_memory(g, shapes_of(g), std::vector<bool>(3, true));
  assert_int_equal(plan.offsets[s0], plan.offsets[r]);
  assert_int_equal(plan.offsets[s1], plan.offsets[r] + 8 * 4 * 4 * 4);
  assert_int_equal(plan.arena_bytes, 1024);
  // Not when the Split runs elsewhere, nor when an output is a graph output.
  assert_true(exec::plan_memory(g, shapes_of(g), {true, false, true}).offsets[s0] !=
              plan.offsets[r]);
  g.outputs.push_back(s1);
  const exec::MemoryPlan with_output =
      exec::plan_memory(g, shapes_of(g), std::vector<bool>(3, true));
  assert_int_equal(with_output.offsets[s1], exec::MemoryPlan::kNotInArena);
  assert_true(with_output.offsets[s0] != with_output.offsets[r]);
}

// x -> r, Reshape(r) -> v, v -> y: the Reshape's output is its input's bytes.
void test_reshape_output_is_a_view(void**) {
  Graph g;
  const int32_t x = add_tensor(g, "x", {1, 16, 4, 4});
  const int32_t r = add_tensor(g, "r", {1, 16, 4, 4});
  const int32_t v = add_tensor(g, "v", {1, 256});
  const int32_t y = add_tensor(g, "y", {1, 256});
  add_node(g, "Relu", {x}, {r});
  add_node(g, "Reshape", {r}, {v});
  add_node(g, "Relu", {v}, {y});
  g.inputs.push_back(graph::GraphInput{x, {}, {}, false, false});
  g.outputs.push_back(y);
  const exec::MemoryPlan plan = exec::plan_memory(g, shapes_of(g), std::vector<bool>(3, true));
  assert_int_equal(plan.offsets[v], plan.offsets[r]);
  assert_int_equal(plan.arena_bytes, 1024);
  assert_true(exec::plan_memory(g, shapes_of(g)).offsets[v] != plan.offsets[r]);
}

// Every pair of tensors alive at the same step occupies disjoint bytes, with in-place inputs
// counted as parts of their concat's output: a chain with a concat of three, one input read
// again after the concat.
void test_live_tensors_never_overlap(void**) {
  Graph g;
  const Shape piece{1, 8, 4, 4};
  const int32_t x = add_tensor(g, "x", piece);
  std::vector<int32_t> t;
  for (int i = 0; i < 3; ++i) t.push_back(add_tensor(g, "t" + std::to_string(i), piece));
  const int32_t joined = add_tensor(g, "joined", {1, 24, 4, 4});
  const int32_t after = add_tensor(g, "after", piece);
  const int32_t y = add_tensor(g, "y", piece);
  add_node(g, "Relu", {x}, {t[0]});
  add_node(g, "Relu", {t[0]}, {t[1]});
  add_node(g, "Relu", {t[1]}, {t[2]});
  add_node(g, "Concat", {t[0], t[1], t[2]}, {joined});
  add_node(g, "Relu", {joined}, {after});  // stands for a reduction back to 8 channels
  add_node(g, "Add", {after, t[1]}, {y});
  g.inputs.push_back(graph::GraphInput{x, {}, {}, false, false});
  g.outputs.push_back(y);
  g.tensors[static_cast<size_t>(after)].shape = piece;
  const exec::MemoryPlan plan = exec::plan_memory(g, shapes_of(g), std::vector<bool>(6, true));
  const int64_t piece_bytes = 8 * 4 * 4 * 4;
  for (int i = 0; i < 3; ++i) {
    assert_int_equal(plan.offsets[t[static_cast<size_t>(i)]],
                     plan.offsets[joined] + i * piece_bytes);
  }
  // `after` is written while t[1] (inside `joined`) is still to be read by the Add.
  const int64_t begin = plan.offsets[after], end = begin + piece_bytes;
  const int64_t joined_begin = plan.offsets[joined], joined_end = joined_begin + 3 * piece_bytes;
  assert_true(end <= joined_begin || joined_end <= begin);
}

bool disjoint(const exec::MemoryPlan& plan, int32_t a, int32_t b, int64_t bytes) {
  return plan.offsets[a] + bytes <= plan.offsets[b] || plan.offsets[b] + bytes <= plan.offsets[a];
}

// An Add and the Relu that alone reads its result run as one kernel on the CPU
// (graph/fusion_chains.h), which writes the Relu's output while it reads the Add's operands,
// element by element. The output lives from the Add's step: it takes the bytes of an operand of
// its shape that dies there, exactly (in place), and otherwise never overlaps an operand.
void test_fused_runs_keep_outputs_off_their_inputs(void**) {
  Graph g;
  const Shape plane{1, 8, 4, 4};
  const int64_t bytes = 8 * 4 * 4 * 4;
  const int32_t x = add_tensor(g, "x", plane);
  const int32_t a = add_tensor(g, "a", plane);
  const int32_t r = add_tensor(g, "r", plane);
  const int32_t s = add_tensor(g, "s", plane);
  const int32_t o = add_tensor(g, "o", plane);
  const int32_t y = add_tensor(g, "y", plane);
  add_node(g, "Relu", {x}, {a});    // 0
  add_node(g, "Neg", {x}, {r});     // 1
  add_node(g, "Add", {a, r}, {s});  // 2: a and r die here
  add_node(g, "Relu", {s}, {o});    // 3
  add_node(g, "Neg", {o}, {y});     // 4
  g.inputs.push_back(graph::GraphInput{x, {}, {}, false, false});
  g.outputs.push_back(y);

  assert_true(graph::fusion_runs(g)[2].kind == graph::FusionRun::Kind::kBinaryActivation);
  assert_true(graph::earliest_write_steps(g) == (std::vector<size_t>{0, 1, 2, 2, 4}));
  const exec::MemoryPlan plan = exec::plan_memory(g, shapes_of(g));
  assert_int_equal(plan.offsets[o], plan.offsets[a]);  // in place on the first operand
  assert_true(disjoint(plan, o, r, bytes));
  assert_true(disjoint(plan, s, a, bytes) && disjoint(plan, s, r, bytes));
  assert_int_equal(plan.arena_bytes, 3 * bytes);  // a (and o), r, s: no more than apart

  // The operand of the output's shape is a graph input, the other a per-channel broadcast: no
  // operand to take, so the output keeps off both. Without the rule the output, written at
  // the Mul's step, is placed on the broadcast operand's bytes.
  Graph broadcast;
  const int32_t bx = add_tensor(broadcast, "x", plane);
  const int32_t pooled = add_tensor(broadcast, "pooled", {1, 8, 1, 1});
  const int32_t gate = add_tensor(broadcast, "gate", {1, 8, 1, 1});
  const int32_t scaled = add_tensor(broadcast, "scaled", plane);
  const int32_t activated = add_tensor(broadcast, "activated", plane);
  const int32_t by = add_tensor(broadcast, "y", plane);
  add_node(broadcast, "GlobalAveragePool", {bx}, {pooled});  // 0
  add_node(broadcast, "Sigmoid", {pooled}, {gate});          // 1
  add_node(broadcast, "Mul", {bx, gate}, {scaled});          // 2: gate dies here
  add_node(broadcast, "Relu", {scaled}, {activated});        // 3
  add_node(broadcast, "Neg", {activated}, {by});             // 4
  broadcast.inputs.push_back(graph::GraphInput{bx, {}, {}, false, false});
  broadcast.outputs.push_back(by);
  const exec::MemoryPlan broadcast_plan = exec::plan_memory(broadcast, shapes_of(broadcast));
  const int64_t gate_begin = broadcast_plan.offsets[gate];
  const int64_t activated_begin = broadcast_plan.offsets[activated];
  assert_true(activated_begin + bytes <= gate_begin || gate_begin + 32 <= activated_begin);
  Graph apart = broadcast;
  apart.nodes[3].op_type = "Max";  // no run
  const exec::MemoryPlan apart_plan = exec::plan_memory(apart, shapes_of(apart));
  const int64_t apart_gate = apart_plan.offsets[gate];
  const int64_t apart_activated = apart_plan.offsets[activated];
  assert_true(apart_gate < apart_activated + bytes && apart_activated < apart_gate + 32);

  // A result with a second reader, or read twice, is no run; nor a non-activation after it.
  Graph twice = g;
  twice.nodes[3].inputs = {s, s};
  assert_false(graph::fusion_runs(twice)[2].kind == graph::FusionRun::Kind::kBinaryActivation);
  Graph observed = g;
  observed.outputs.push_back(s);
  assert_false(graph::fusion_runs(observed)[2].kind == graph::FusionRun::Kind::kBinaryActivation);
  Graph no_output = g;  // malformed, but the rule must not read past the outputs
  no_output.nodes[3].outputs.clear();
  assert_false(graph::fusion_runs(no_output)[2].kind == graph::FusionRun::Kind::kBinaryActivation);
  Graph transposed = g;
  transposed.nodes[3].op_type = "Transpose";
  assert_false(graph::fusion_runs(transposed)[2].kind == graph::FusionRun::Kind::kBinaryActivation);
}

// A Conv, the residual Add that alone reads its result and the Relu after it run as one kernel
// on the CPU (graph/fusion_chains.h), which writes the Relu's output while it reads the Conv's
// input and the residual: the run's outputs live from the Conv's step and never take their
// bytes; the output takes the Conv result's.
void test_residual_convolution_runs(void**) {
  Graph g;
  const Shape plane{1, 8, 4, 4};
  const int64_t bytes = 8 * 4 * 4 * 4;
  const int32_t x = add_tensor(g, "x", plane);
  const int32_t a = add_tensor(g, "a", plane);
  const int32_t r = add_tensor(g, "r", plane);
  const int32_t w = add_tensor(g, "w", {8, 8, 1, 1});
  g.tensors[static_cast<size_t>(w)].constant = true;
  const int32_t c = add_tensor(g, "c", plane);
  const int32_t s = add_tensor(g, "s", plane);
  const int32_t o = add_tensor(g, "o", plane);
  const int32_t y = add_tensor(g, "y", plane);
  add_node(g, "Relu", {x}, {a});     // 0
  add_node(g, "Neg", {x}, {r});      // 1
  add_node(g, "Conv", {a, w}, {c});  // 2: a dies here
  add_node(g, "Add", {r, c}, {s});   // 3: the residual Add (the Conv's result second)
  add_node(g, "Relu", {s}, {o});     // 4
  add_node(g, "Neg", {o}, {y});      // 5
  g.inputs.push_back(graph::GraphInput{x, {}, {}, false, false});
  g.outputs.push_back(y);

  using Kind = graph::FusionRun::Kind;
  const std::vector<graph::FusionRun> runs = graph::fusion_runs(g);
  assert_true(runs[2].kind == Kind::kResidualConvolution);
  assert_int_equal(runs[2].length, 3);
  assert_true(runs[3].kind == Kind::kNone);  // inside the run: no run of its own
  assert_true(graph::earliest_write_steps(g) == (std::vector<size_t>{0, 1, 2, 2, 2, 5}));
  const exec::MemoryPlan plan = exec::plan_memory(g, shapes_of(g));
  assert_true(disjoint(plan, o, a, bytes));
  assert_true(disjoint(plan, s, a, bytes));
  // The run's output takes the bytes of the Conv's result, which the fused kernel never
  // writes; the residual stays apart (the kernel reads it while it writes).
  assert_int_equal(plan.offsets[o], plan.offsets[c]);
  assert_true(disjoint(plan, o, r, bytes));
  assert_true(disjoint(plan, s, r, bytes) && disjoint(plan, s, o, bytes));

  // The same nodes with no run (a Gemm is never fused): best fit puts a run output on the
  // Conv's input, the placement the rule prevents.
  Graph unfused = g;
  unfused.nodes[2].op_type = "Gemm";
  const exec::MemoryPlan unfused_plan = exec::plan_memory(unfused, shapes_of(unfused));
  assert_false(disjoint(unfused_plan, s, a, bytes) && disjoint(unfused_plan, o, a, bytes));

  // A Conv result with a second reader, or observed as a graph output, is no run; without its
  // Relu the run is the Conv and the Add.
  Graph twice = g;
  twice.nodes[5].inputs = {o, c};
  assert_true(graph::fusion_runs(twice)[2].kind == Kind::kNone);
  Graph observed = g;
  observed.outputs.push_back(c);
  assert_true(graph::fusion_runs(observed)[2].kind == Kind::kNone);
  Graph no_activation = g;
  no_activation.nodes[4].op_type = "Transpose";
  assert_true(graph::fusion_runs(no_activation)[2].kind == Kind::kResidualConvolution);
  assert_int_equal(graph::fusion_runs(no_activation)[2].length, 2);
  // An int8 Conv takes no residual: its Add and Relu keep their own run.
  Graph quantized = g;
  quantized.tensors[static_cast<size_t>(c)].data_type = DataType::kInt8;
  assert_true(graph::fusion_runs(quantized)[2].kind == Kind::kNone);
  assert_true(graph::fusion_runs(quantized)[3].kind == Kind::kBinaryActivation);
}

}  // namespace

int main() {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_concat_inputs_placed_in_the_output),
      cmocka_unit_test(test_concat_left_alone_when_it_must_copy),
      cmocka_unit_test(test_split_outputs_placed_in_the_input),
      cmocka_unit_test(test_reshape_output_is_a_view),
      cmocka_unit_test(test_live_tensors_never_overlap),
      cmocka_unit_test(test_fused_runs_keep_outputs_off_their_inputs),
      cmocka_unit_test(test_residual_convolution_runs),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
