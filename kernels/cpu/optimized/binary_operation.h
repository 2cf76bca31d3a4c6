// The float binary operations of the element-wise micro-kernels, written once for every ISA:
// codes as reference::BinaryOperation (0 add, 1 subtract, 2 multiply, 3 divide), one IEEE
// operation per element so every variant gives the reference's bits. Each ISA writes its row
// loop as a template on the operation and dispatches through with_binary_operation.
#pragma once

#include <type_traits>

namespace orknn::kernels::cpu::optimized {

template <int kOperation>
inline float apply_binary_operation(float a, float b) {
  if constexpr (kOperation == 0) return a + b;
  if constexpr (kOperation == 1) return a - b;
  if constexpr (kOperation == 2) return a * b;
  return a / b;
}

// Calls body(std::integral_constant<int, operation>{}), so the operation is a compile-time
// constant inside the body's loops.
template <typename Body>
inline void with_binary_operation(int operation, Body&& body) {
  switch (operation) {
    case 0:
      return body(std::integral_constant<int, 0>{});
    case 1:
      return body(std::integral_constant<int, 1>{});
    case 2:
      return body(std::integral_constant<int, 2>{});
    default:
      return body(std::integral_constant<int, 3>{});
  }
}

// Calls body(std::bool_constant<a_full>{}, std::bool_constant<b_full>{}): a row loop templated
// on whether each operand steps through the row (full) or is one broadcast value.
template <typename Body>
inline void with_operand_steps(bool a_full, bool b_full, Body&& body) {
  if (a_full && b_full) return body(std::true_type{}, std::true_type{});
  if (a_full) return body(std::true_type{}, std::false_type{});
  if (b_full) return body(std::false_type{}, std::true_type{});
  return body(std::false_type{}, std::false_type{});
}

}  // namespace orknn::kernels::cpu::optimized
