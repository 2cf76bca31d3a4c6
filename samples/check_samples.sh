#!/bin/sh
# Runs the sample programs on generated models and checks what they print (a ctest, registered
# in tests/api/CMakeLists.txt).
#
# usage: check_samples.sh ORKNN_MAKE_MODEL RKNN_API_DEMO RKNN_BENCHMARK WORK_DIR
#                         [RKNN_ZERO_COPY_DEMO RKNN_INTERNAL_MEM_REUSE_DEMO]
# ORKNN_EMULATOR, when set, prefixes every program (qemu for cross builds).
set -u

emulator=${ORKNN_EMULATOR:-}
make_model=$1
demo=$2
benchmark=$3
work=$4
zero_copy_demo=${5:-}
mem_reuse_demo=${6:-}
failures=0

rm -rf "$work"
mkdir -p "$work" || exit 1

# Runs a program, through the emulator when one is set.
exe() {
  if [ -n "$emulator" ]; then
    $emulator "$@"
  else
    "$@"
  fi
}

fail() {
  echo "FAIL: $*"
  failures=$((failures + 1))
}

# expect_output NAME FILE TEXT...: FILE contains every TEXT (fixed strings).
expect_output() {
  name=$1
  file=$2
  shift 2
  for text in "$@"; do
    if ! grep -qF -- "$text" "$file"; then
      fail "$name: output lacks '$text'"
      echo "---- $name output ----"
      cat "$file"
      echo "----"
      return
    fi
  done
  echo "ok: $name"
}

# run NAME EXPECTED_STATUS COMMAND...: output (stdout + stderr) goes to $work/NAME.log.
run() {
  name=$1
  expected=$2
  shift 2
  "$@" >"$work/$name.log" 2>&1
  status=$?
  if [ "$expected" = 0 ] && [ "$status" -ne 0 ]; then
    fail "$name: exit status $status"
    cat "$work/$name.log"
  elif [ "$expected" != 0 ] && [ "$status" -eq 0 ]; then
    fail "$name: succeeded, but should have failed"
    cat "$work/$name.log"
  fi
}

run make_mobilenet 0 exe "$make_model" mobilenet_mini int8 "$work/mobilenet_mini_int8.rknn" \
  --input-npy "$work/mobilenet_mini.npy"
run make_two_inputs 0 exe "$make_model" two_inputs fp16 "$work/two_inputs_fp16.rknn" \
  --input-npy "$work/two_inputs.npy"
run make_tiny 0 exe "$make_model" tiny fp32 "$work/tiny_fp32.rknn"
expect_output make_two_inputs "$work/make_two_inputs.log" "two_inputs.npy" "two_inputs_1.npy"

# rknn_api_demo: attributes in the vendor format, custom string, top 5, perf table.
run demo_mobilenet 0 exe "$demo" "$work/mobilenet_mini_int8.rknn" "$work/mobilenet_mini.npy"
expect_output demo_mobilenet "$work/demo_mobilenet.log" \
  "model input num: 1, output num: 1" \
  "index=0, name=input, n_dims=4, dims=[1, 224, 224, 3], n_elems=150528, size=150528, w_stride = 224, size_with_stride=150528, fmt=NHWC, type=INT8, qnt_type=AFFINE, zp=0, scale=0.007843" \
  "n_dims=2, dims=[1, 1000], n_elems=1000, size=1000" \
  "custom string: model=mobilenet_mini;classes=1000" \
  "input 0: npy u1 [1, 224, 224, 3]" \
  " --- Top5 ---" \
  "Network Layer Information Table"
if [ "$(grep -cE '^ *[0-9]+: [0-9]+\.[0-9]{6}$' "$work/demo_mobilenet.log")" != 5 ]; then
  fail "demo_mobilenet: expected 5 top-5 lines"
fi

# Two inputs: one file and one synthetic image.
run demo_two_inputs 0 exe "$demo" "$work/two_inputs_fp16.rknn" "$work/two_inputs.npy"
expect_output demo_two_inputs "$work/demo_two_inputs.log" \
  "model input num: 2, output num: 1" "input 0: npy u1 [1, 128, 128, 1]" \
  "input 1: synthetic uint8 NHWC [1, 128, 128, 3]" " --- Top5 ---"

# Synthetic input, two outputs.
run demo_tiny 0 exe "$demo" "$work/tiny_fp32.rknn"
expect_output demo_tiny "$work/demo_tiny.log" "output 0 (softmax.out):" \
  "output 1 (concat.out):" " --- Top5 ---"

# An image file: a 2x2 24-bit BMP, resized to 224x224 (only when built with stb_image).
printf 'BM\106\000\000\000\000\000\000\000\066\000\000\000\050\000\000\000\002\000\000\000\002\000\000\000\001\000\030\000\000\000\000\000\020\000\000\000\023\013\000\000\023\013\000\000\000\000\000\000\000\000\000\000\000\000\377\000\377\000\000\000\377\000\000\377\377\377\000\000' \
  >"$work/tiny.bmp"
exe "$demo" "$work/mobilenet_mini_int8.rknn" "$work/tiny.bmp" >"$work/demo_bmp.log" 2>&1
if grep -q "no image decoder" "$work/demo_bmp.log"; then
  echo "skip: demo_bmp (built without stb_image)"
else
  expect_output demo_bmp "$work/demo_bmp.log" "input 0: image 2x2, 3 channel(s), resized" \
    " --- Top5 ---"
fi

# Errors: a missing model, and an input of the wrong shape.
run demo_missing_model 1 exe "$demo" "$work/no_such_model.rknn"
expect_output demo_missing_model "$work/demo_missing_model.log" "rknn_init fail! ret="
run demo_wrong_input 1 exe "$demo" "$work/mobilenet_mini_int8.rknn" "$work/two_inputs.npy"
expect_output demo_wrong_input "$work/demo_wrong_input.log" "does not match input 'input'"

# rknn_benchmark: memory figures, per-run lines, average, perf table.
run benchmark_mobilenet 0 exe "$benchmark" "$work/mobilenet_mini_int8.rknn" \
  "$work/mobilenet_mini.npy" 3 1 --warmup 1
expect_output benchmark_mobilenet "$work/benchmark_mobilenet.log" \
  "total weight size: " "total internal size: " "total dma used size: " \
  "   0: Elapse Time = " "   2: Elapse Time = " "Avg Time " "Avg FPS = " "---- Top5 ----" \
  "Network Layer Information Table" "perf run duration: "

# Two inputs joined with '#', default core mask, JSON on stdout.
exe "$benchmark" "$work/two_inputs_fp16.rknn" "$work/two_inputs.npy#$work/two_inputs_1.npy" 2 \
  --warmup 0 --json >"$work/benchmark_json.out" 2>"$work/benchmark_json.log"
status=$?
if [ $status -ne 0 ]; then
  fail "benchmark_json: exit status $status"
  cat "$work/benchmark_json.log"
else
  expect_output benchmark_json_text "$work/benchmark_json.log" "Avg FPS = " \
    "input 1: npy u1 [1, 128, 128, 3]"
  expect_output benchmark_json "$work/benchmark_json.out" '{"model":' '"avg_ms":' \
    '"run_ms":[' '"total_weight_size":' '"perf_detail":'
  if [ "$(wc -l <"$work/benchmark_json.out")" != 1 ]; then
    fail "benchmark_json: stdout should be one JSON line"
  fi
fi

# An invalid core mask for rk3588 is an error (5 is not a supported combination).
run benchmark_bad_mask 1 exe "$benchmark" "$work/tiny_fp32.rknn" 1 5 --warmup 0
expect_output benchmark_bad_mask "$work/benchmark_bad_mask.log" "rknn_set_core_mask(5) fail!"

# rknn_zero_copy_demo: native attrs, UINT8 input and FLOAT32 outputs bound once, timed loop;
# its top 5 must be the general API's (same input file, same model).
if [ -n "$zero_copy_demo" ]; then
  run zero_copy_mobilenet 0 exe "$zero_copy_demo" "$work/mobilenet_mini_int8.rknn" \
    "$work/mobilenet_mini.npy" --loops 3
  expect_output zero_copy_mobilenet "$work/zero_copy_mobilenet.log" \
    "input tensors (native):" "fmt=NHWC, type=INT8" "output tensors (bound as FLOAT32):" \
    "size=4000" "3 runs, Avg Time " " --- Top5 ---"
  grep -E '^ *[0-9]+: [0-9]+\.[0-9]{6}$' "$work/demo_mobilenet.log" >"$work/top5_general.txt"
  grep -E '^ *[0-9]+: [0-9]+\.[0-9]{6}$' "$work/zero_copy_mobilenet.log" >"$work/top5_zero_copy.txt"
  if ! cmp -s "$work/top5_general.txt" "$work/top5_zero_copy.txt"; then
    fail "zero_copy_mobilenet: top 5 differs from rknn_api_demo's"
  fi
  run zero_copy_two_inputs 0 exe "$zero_copy_demo" "$work/two_inputs_fp16.rknn" --loops 2
  expect_output zero_copy_two_inputs "$work/zero_copy_two_inputs.log" \
    "input 1: synthetic uint8 NHWC [1, 128, 128, 3]" "2 runs, Avg Time "
  run zero_copy_missing_model 1 exe "$zero_copy_demo" "$work/no_such_model.rknn"
  expect_output zero_copy_missing_model "$work/zero_copy_missing_model.log" "rknn_init fail! ret="
fi

# rknn_internal_mem_reuse_demo: two models, one internal buffer of the larger size.
if [ -n "$mem_reuse_demo" ]; then
  run mem_reuse 0 exe "$mem_reuse_demo" "$work/mobilenet_mini_int8.rknn" "$work/tiny_fp32.rknn" 2
  expect_output mem_reuse "$work/mem_reuse.log" "model 0 (" "model 1 (" \
    "total internal size: " "shared internal buffer: " "loop 1 model 1: " "model 1 results:" \
    " --- Top5 ---"
fi

if [ $failures -ne 0 ]; then
  echo "$failures check(s) failed; logs in $work"
  exit 1
fi
echo "all sample program checks passed"
