/*
 * ABI contract of include/rknn_api.h, rknn_matmul_api.h and rknn_custom_op.h.
 *
 * The facts live in abi_layout_static_asserts.h, which already fails the build when a header
 * disagrees with them. This test walks the same tables at run time so that ctest lists what was
 * checked (and, built with -DORKNN_ABI_TABLES_ONLY, reports every mismatch at once), and checks
 * what a compiler cannot: the text returned by the inline string helpers, and that flags and
 * error codes are preprocessor macros.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "abi_layout_static_asserts.h"

/* One checked fact: a number the compiler reports against the number the reference gives, or
 * (claim != 0) a statement that must hold, with actual 1 when it does. */
typedef struct {
  const char* what;
  long long actual;
  long long expected;
  int claim;
} AbiFact;

/* One checked string. */
typedef struct {
  const char* what;
  const char* actual;
  const char* expected;
} AbiText;

#define ABI_COUNT(array) (sizeof(array) / sizeof((array)[0]))

/* Reports every mismatch of the table and returns how many there were; each test asserts on
 * the sum at its end, so one run lists all mismatches of an area. */
static size_t check_facts(const char* table, const AbiFact* facts, size_t count) {
  size_t mismatches = 0;
  for (size_t i = 0; i < count; ++i) {
    if (facts[i].actual == facts[i].expected) continue;
    if (facts[i].claim) {
      print_error("%s: does not hold: %s\n", table, facts[i].what);
    } else {
      print_error("%s: %s is %lld, the reference says %lld\n", table, facts[i].what,
                  facts[i].actual, facts[i].expected);
    }
    ++mismatches;
  }
  print_message("%s: %zu facts checked, %zu mismatches\n", table, count, mismatches);
  return mismatches;
}

static size_t check_texts(const char* table, const AbiText* texts, size_t count) {
  size_t mismatches = 0;
  for (size_t i = 0; i < count; ++i) {
    if (texts[i].actual == NULL || strcmp(texts[i].actual, texts[i].expected) != 0) {
      print_error("%s: %s returned \"%s\", expected \"%s\"\n", table, texts[i].what,
                  texts[i].actual ? texts[i].actual : "(null)", texts[i].expected);
      ++mismatches;
    }
  }
  print_message("%s: %zu strings checked, %zu mismatches\n", table, count, mismatches);
  return mismatches;
}

/* Row builders for the X-macro tables of abi_layout_static_asserts.h. */
#define TYPE_FACTS(type, size, align)                        \
  {"sizeof(" #type ")", (long long)sizeof(type), (size), 0}, \
      {"alignof(" #type ")", (long long)ORKNN_ABI_ALIGNOF(type), (align), 0},
#define FIELD_FACTS(type, field, offset, size)                                        \
  {"offsetof(" #type ", " #field ")", (long long)offsetof(type, field), (offset), 0}, \
      {"sizeof(" #type "." #field ")", (long long)ORKNN_ABI_FIELD_SIZE(type, field), (size), 0},
#define FIELD_TYPE_FACTS(type, field, pointer_type) \
  {"&" #type "." #field " has type " #pointer_type, \
   ORKNN_ABI_SAME_TYPE(&((type*)0)->field, pointer_type), 1, 1},
#define VALUE_FACTS(name, value) {#name, (long long)(name), (value), 0},
#define FUNCTION_FACTS(name, return_type, parameters)        \
  {#name " has the prototype " #return_type " " #parameters, \
   ORKNN_ABI_SAME_TYPE(&name, return_type(*) parameters), 1, 1},

/* A constant is a preprocessor macro when stringizing its expansion does not give its name. */
#define ABI_STRINGIZE(x) #x
#define ABI_EXPAND_AND_STRINGIZE(x) ABI_STRINGIZE(x)
#define MACRO_FACTS(name, value) \
  {#name " is a preprocessor macro", strcmp(ABI_EXPAND_AND_STRINGIZE(name), #name) != 0, 1, 1},

/* ------------------------------------------------------------------------------------------- */

/* Size, alignment, field offsets, field sizes and field types of every rknn_api.h struct, and
 * the prototypes of every rknn_api.h function. */
static void test_struct_layout(void** state) {
  size_t mismatches = 0;
  (void)state;
  print_message("ABI: %s\n", ORKNN_ABI_NAME);
#if ORKNN_ABI_HAVE_LAYOUT
  static const AbiFact types[] = {ORKNN_ABI_CORE_TYPES(TYPE_FACTS)};
  static const AbiFact fields[] = {ORKNN_ABI_CORE_FIELDS(FIELD_FACTS)};
  mismatches += check_facts("rknn_api.h types", types, ABI_COUNT(types));
  mismatches += check_facts("rknn_api.h fields", fields, ABI_COUNT(fields));
#endif
  static const AbiFact field_types[] = {ORKNN_ABI_CORE_FIELD_TYPES(FIELD_TYPE_FACTS)};
  static const AbiFact functions[] = {ORKNN_ABI_CORE_FUNCTIONS(FUNCTION_FACTS)};
  mismatches += check_facts("rknn_api.h field types", field_types, ABI_COUNT(field_types));
  mismatches += check_facts("rknn_api.h prototypes", functions, ABI_COUNT(functions));

  /* The handle is an unsigned integer as wide as a pointer of the vendor ABI. */
  assert_true((rknn_context)-1 > 0);
#if defined(__arm__)
  assert_int_equal(sizeof(rknn_context), sizeof(uint32_t));
#else
  assert_int_equal(sizeof(rknn_context), sizeof(uint64_t));
#endif
  assert_int_equal(mismatches, 0);
#if !ORKNN_ABI_HAVE_LAYOUT
  skip(); /* no measured layout for this ABI; the type checks above still ran */
#endif
}

static void test_enum_values(void** state) {
  size_t mismatches = 0;
  (void)state;
  static const AbiFact values[] = {ORKNN_ABI_CORE_ENUM_VALUES(VALUE_FACTS)};
  mismatches += check_facts("rknn_api.h enums", values, ABI_COUNT(values));
  assert_int_equal(mismatches, 0);
}

/* rknn_init flags, memory flag and limits: values, and that each is a macro. */
static void test_flag_values(void** state) {
  size_t mismatches = 0;
  (void)state;
  static const AbiFact values[] = {ORKNN_ABI_FLAG_MACROS(VALUE_FACTS)};
  mismatches += check_facts("rknn_api.h flags and limits", values, ABI_COUNT(values));
  const AbiFact macros[] = {ORKNN_ABI_FLAG_MACROS(MACRO_FACTS)};
  mismatches += check_facts("rknn_api.h flags and limits are macros", macros, ABI_COUNT(macros));

  /* Usable in #if, as applications do for feature tests. */
#if RKNN_FLAG_MODEL_BUFFER_ZERO_COPY != 0x00010000 || RKNN_MAX_DIMS != 16
  fail_msg("flag macros are not usable in #if");
#endif
  assert_int_equal(mismatches, 0);
}

static void test_error_codes(void** state) {
  size_t mismatches = 0;
  (void)state;
  static const AbiFact values[] = {ORKNN_ABI_ERROR_MACROS(VALUE_FACTS)};
  mismatches += check_facts("rknn_api.h error codes", values, ABI_COUNT(values));
  const AbiFact macros[] = {ORKNN_ABI_ERROR_MACROS(MACRO_FACTS)};
  mismatches += check_facts("rknn_api.h error codes are macros", macros, ABI_COUNT(macros));
#if RKNN_SUCC != 0 || RKNN_ERR_TARGET_PLATFORM_UNMATCH != -13
  fail_msg("error code macros are not usable in #if");
#endif
  assert_int_equal(mismatches, 0);
}

/* The inline helpers of rknn_api.h, every value and the fallback on both sides of the range. */
static void test_string_helpers(void** state) {
  size_t mismatches = 0;
  (void)state;
  const AbiText texts[] = {
      {"get_type_string(FLOAT32)", get_type_string(RKNN_TENSOR_FLOAT32), "FP32"},
      {"get_type_string(FLOAT16)", get_type_string(RKNN_TENSOR_FLOAT16), "FP16"},
      {"get_type_string(INT8)", get_type_string(RKNN_TENSOR_INT8), "INT8"},
      {"get_type_string(UINT8)", get_type_string(RKNN_TENSOR_UINT8), "UINT8"},
      {"get_type_string(INT16)", get_type_string(RKNN_TENSOR_INT16), "INT16"},
      {"get_type_string(UINT16)", get_type_string(RKNN_TENSOR_UINT16), "UINT16"},
      {"get_type_string(INT32)", get_type_string(RKNN_TENSOR_INT32), "INT32"},
      {"get_type_string(UINT32)", get_type_string(RKNN_TENSOR_UINT32), "UINT32"},
      {"get_type_string(INT64)", get_type_string(RKNN_TENSOR_INT64), "INT64"},
      {"get_type_string(BOOL)", get_type_string(RKNN_TENSOR_BOOL), "BOOL"},
      {"get_type_string(INT4)", get_type_string(RKNN_TENSOR_INT4), "INT4"},
      {"get_type_string(BFLOAT16)", get_type_string(RKNN_TENSOR_BFLOAT16), "BF16"},
      {"get_type_string(TYPE_MAX)", get_type_string(RKNN_TENSOR_TYPE_MAX), "UNKNOW"},
      {"get_type_string(-1)", get_type_string((rknn_tensor_type)-1), "UNKNOW"},
      {"get_qnt_type_string(NONE)", get_qnt_type_string(RKNN_TENSOR_QNT_NONE), "NONE"},
      {"get_qnt_type_string(DFP)", get_qnt_type_string(RKNN_TENSOR_QNT_DFP), "DFP"},
      {"get_qnt_type_string(AFFINE)", get_qnt_type_string(RKNN_TENSOR_QNT_AFFINE_ASYMMETRIC),
       "AFFINE"},
      {"get_qnt_type_string(QNT_MAX)", get_qnt_type_string(RKNN_TENSOR_QNT_MAX), "UNKNOW"},
      {"get_qnt_type_string(-1)", get_qnt_type_string((rknn_tensor_qnt_type)-1), "UNKNOW"},
      {"get_format_string(NCHW)", get_format_string(RKNN_TENSOR_NCHW), "NCHW"},
      {"get_format_string(NHWC)", get_format_string(RKNN_TENSOR_NHWC), "NHWC"},
      {"get_format_string(NC1HWC2)", get_format_string(RKNN_TENSOR_NC1HWC2), "NC1HWC2"},
      {"get_format_string(UNDEFINED)", get_format_string(RKNN_TENSOR_UNDEFINED), "UNDEFINED"},
      {"get_format_string(FORMAT_MAX)", get_format_string(RKNN_TENSOR_FORMAT_MAX), "UNKNOW"},
      {"get_format_string(-1)", get_format_string((rknn_tensor_format)-1), "UNKNOW"},
  };
  mismatches += check_texts("rknn_api.h helpers", texts, ABI_COUNT(texts));
  assert_int_equal(mismatches, 0);
}

/* Everything rknn_matmul_api.h declares: layouts, field types, enum values, prototypes and the
 * get_matmul_type_string helper. */
static void test_matmul_api(void** state) {
  size_t mismatches = 0;
  (void)state;
#if ORKNN_ABI_HAVE_LAYOUT
  static const AbiFact types[] = {ORKNN_ABI_MATMUL_TYPES(TYPE_FACTS)};
  static const AbiFact fields[] = {ORKNN_ABI_MATMUL_FIELDS(FIELD_FACTS)};
  mismatches += check_facts("rknn_matmul_api.h types", types, ABI_COUNT(types));
  mismatches += check_facts("rknn_matmul_api.h fields", fields, ABI_COUNT(fields));
#endif
  static const AbiFact field_types[] = {ORKNN_ABI_MATMUL_FIELD_TYPES(FIELD_TYPE_FACTS)};
  static const AbiFact values[] = {ORKNN_ABI_MATMUL_ENUM_VALUES(VALUE_FACTS)};
  static const AbiFact functions[] = {ORKNN_ABI_MATMUL_FUNCTIONS(FUNCTION_FACTS)};
  mismatches += check_facts("rknn_matmul_api.h field types", field_types, ABI_COUNT(field_types));
  mismatches += check_facts("rknn_matmul_api.h enums", values, ABI_COUNT(values));
  mismatches += check_facts("rknn_matmul_api.h prototypes", functions, ABI_COUNT(functions));

  /* The helper prints the enumerator's own name. RKNN_INT8_MM_INT4_TO_FLOAT16 (15) is named
   * too, where the vendor helper falls back to "UNKNOW". */
#define MATMUL_TEXT(name) \
  {"get_matmul_type_string(" #name ")", get_matmul_type_string(name), #name},
  // clang-format off
  const AbiText texts[] = {
      MATMUL_TEXT(RKNN_FLOAT16_MM_FLOAT16_TO_FLOAT32)
      MATMUL_TEXT(RKNN_INT8_MM_INT8_TO_INT32)
      MATMUL_TEXT(RKNN_INT8_MM_INT8_TO_INT8)
      MATMUL_TEXT(RKNN_FLOAT16_MM_FLOAT16_TO_FLOAT16)
      MATMUL_TEXT(RKNN_FLOAT16_MM_INT8_TO_FLOAT32)
      MATMUL_TEXT(RKNN_FLOAT16_MM_INT8_TO_FLOAT16)
      MATMUL_TEXT(RKNN_FLOAT16_MM_INT4_TO_FLOAT32)
      MATMUL_TEXT(RKNN_FLOAT16_MM_INT4_TO_FLOAT16)
      MATMUL_TEXT(RKNN_INT8_MM_INT8_TO_FLOAT32)
      MATMUL_TEXT(RKNN_INT4_MM_INT4_TO_INT16)
      MATMUL_TEXT(RKNN_INT8_MM_INT4_TO_INT32)
      MATMUL_TEXT(RKNN_FLOAT16_MM_INT4_TO_BFLOAT16)
      MATMUL_TEXT(RKNN_INT8_MM_INT4_TO_FLOAT16)
      {"get_matmul_type_string(0)", get_matmul_type_string((rknn_matmul_type)0), "UNKNOW"},
      {"get_matmul_type_string(13)", get_matmul_type_string((rknn_matmul_type)13), "UNKNOW"},
      {"get_matmul_type_string(14)", get_matmul_type_string((rknn_matmul_type)14), "UNKNOW"},
      {"get_matmul_type_string(16)", get_matmul_type_string((rknn_matmul_type)16), "UNKNOW"},
  };
  // clang-format on
#undef MATMUL_TEXT
  mismatches += check_texts("rknn_matmul_api.h helpers", texts, ABI_COUNT(texts));
  assert_int_equal(mismatches, 0);
}

/* A plugin entry point, to prove get_custom_op_func accepts a plain function. */
static rknn_custom_op* abi_test_get_custom_op(void) {
  return NULL;
}

/* Everything rknn_custom_op.h declares: layouts, field and callback types, constants and
 * prototypes. */
static void test_custom_op_api(void** state) {
  size_t mismatches = 0;
  (void)state;
#if ORKNN_ABI_HAVE_LAYOUT
  static const AbiFact types[] = {ORKNN_ABI_CUSTOM_OP_TYPES(TYPE_FACTS)};
  static const AbiFact fields[] = {ORKNN_ABI_CUSTOM_OP_FIELDS(FIELD_FACTS)};
  mismatches += check_facts("rknn_custom_op.h types", types, ABI_COUNT(types));
  mismatches += check_facts("rknn_custom_op.h fields", fields, ABI_COUNT(fields));
#endif
  static const AbiFact field_types[] = {ORKNN_ABI_CUSTOM_OP_FIELD_TYPES(FIELD_TYPE_FACTS)};
  static const AbiFact values[] = {ORKNN_ABI_CUSTOM_OP_ENUM_VALUES(VALUE_FACTS)
                                       ORKNN_ABI_CUSTOM_OP_MACROS(VALUE_FACTS)};
  static const AbiFact functions[] = {ORKNN_ABI_CUSTOM_OP_FUNCTIONS(FUNCTION_FACTS)};
  mismatches += check_facts("rknn_custom_op.h field types", field_types, ABI_COUNT(field_types));
  mismatches += check_facts("rknn_custom_op.h constants", values, ABI_COUNT(values));
  mismatches += check_facts("rknn_custom_op.h prototypes", functions, ABI_COUNT(functions));
  const AbiFact macros[] = {ORKNN_ABI_CUSTOM_OP_MACROS(MACRO_FACTS)};
  mismatches += check_facts("rknn_custom_op.h constants are macros", macros, ABI_COUNT(macros));

  get_custom_op_func entry = abi_test_get_custom_op;
  assert_null(entry());
  /* The skip code follows the last rknn_api.h error code. */
  assert_int_equal(RKNN_WARNING_SKIP_CUSTOM_OP_COMPUTE, RKNN_ERR_TARGET_PLATFORM_UNMATCH - 1);
  assert_int_equal(mismatches, 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_struct_layout),  cmocka_unit_test(test_enum_values),
      cmocka_unit_test(test_flag_values),    cmocka_unit_test(test_error_codes),
      cmocka_unit_test(test_string_helpers), cmocka_unit_test(test_matmul_api),
      cmocka_unit_test(test_custom_op_api),
  };
  return cmocka_run_group_tests_name("abi_layout", tests, NULL, NULL);
}
