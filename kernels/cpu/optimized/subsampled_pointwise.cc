// The subsampling wrapper of subsampled_pointwise.h: one copy, then the wrapped stride-1 kernel.
#include "optimized/subsampled_pointwise.h"

#include "optimized/even_elements.h"

#include <string>
#include <utility>

namespace orknn::kernels::cpu::optimized {
namespace {

using reference::Conv2DShape;

constexpr size_t kScratchAlignment = 64;

size_t round_up(size_t bytes) {
  return (bytes + kScratchAlignment - 1) / kScratchAlignment * kScratchAlignment;
}

// Copies pixel (oh x sh, ow x sw) of every input plane to (oh, ow) of an OH x OW plane, one task
// per plane (batch x channels), shared by the pool's threads.
template <typename T>
void subsample(const Conv2DShape& shape, const T* input, T* planes, ThreadPool& pool) {
  const reference::Window2D& w = shape.window;
  const size_t input_width = static_cast<size_t>(w.input_width);
  const size_t input_plane = static_cast<size_t>(w.input_height) * input_width;
  const size_t output_height = static_cast<size_t>(w.output_height);
  const size_t output_width = static_cast<size_t>(w.output_width);
  const size_t output_plane = output_height * output_width;
  const size_t row_step = static_cast<size_t>(w.stride_height) * input_width;
  const size_t column_step = static_cast<size_t>(w.stride_width);
  pool.parallel_for(static_cast<size_t>(shape.batch * shape.input_channels),
                    [&](size_t plane, size_t) {
                      const T* source = input + plane * input_plane;
                      T* target = planes + plane * output_plane;
                      for (size_t oh = 0; oh < output_height; ++oh) {
                        const T* row = source + oh * row_step;
                        if (column_step == 2) {
                          copy_even_elements(row, target, output_width, input_width);
                        } else {
                          for (size_t ow = 0; ow < output_width; ++ow) {
                            target[ow] = row[ow * column_step];
                          }
                        }
                        target += output_width;
                      }
                    });
}

// Where the copy goes and how large it is; shared by the int8 and float32 wrappers.
struct CopyPlacement {
  size_t offset = 0;  // in thread 0's scratch
  size_t bytes = 0;
};

CopyPlacement place_copy(const Conv2DShape& shape, size_t inner_scratch, size_t element_size) {
  const reference::Window2D& w = shape.window;
  // The inner kernel takes thread 0's scratch from its start (every kernel does), so the copy
  // lives after it; both fit in the one buffer scratch_bytes() reserves.
  CopyPlacement placement;
  placement.offset = round_up(inner_scratch);
  placement.bytes =
      static_cast<size_t>(shape.batch * shape.input_channels * w.output_height * w.output_width) *
      element_size;
  return placement;
}

// Thread 0's scratch at the copy. Requesting the whole size first means the inner kernel's own
// (smaller) request returns this same buffer instead of growing it away under the copy.
template <typename T>
T* copy_area(ThreadPool& pool, const CopyPlacement& placement) {
  return reinterpret_cast<T*>(pool.scratch(0, placement.offset + placement.bytes) +
                              placement.offset);
}

// The wrapper over either convolution interface: Base is Conv2DInt8 (Element int8_t, Bias
// int32_t) or Conv2DFloat (float, float).
template <typename Base, typename Element, typename Bias>
class SubsampledPointwise final : public Base {
 public:
  SubsampledPointwise(const Conv2DShape& shape, std::unique_ptr<Base> inner)
      : shape_(shape),
        inner_(std::move(inner)),
        copy_(place_copy(shape, inner_->scratch_bytes(), sizeof(Element))),
        algorithm_(std::string("subsampled ") + inner_->algorithm()) {}
  size_t scratch_bytes() const override { return copy_.offset + copy_.bytes; }
  const char* algorithm() const override { return algorithm_.c_str(); }
  void run(const Element* input, const Element* weights, const Bias* bias, Element* output,
           ThreadPool& pool) const override {
    Element* planes = copy_area<Element>(pool, copy_);
    subsample(shape_, input, planes, pool);
    inner_->run(planes, weights, bias, output, pool);
  }

 private:
  const Conv2DShape shape_;
  const std::unique_ptr<Base> inner_;
  const CopyPlacement copy_;
  const std::string algorithm_;
};

using SubsampledPointwiseInt8 = SubsampledPointwise<Conv2DInt8, int8_t, int32_t>;
using SubsampledPointwiseFloat = SubsampledPointwise<Conv2DFloat, float, float>;

}  // namespace

bool subsampled_pointwise_applies(const Conv2DShape& shape) {
  const reference::Window2D& w = shape.window;
  const bool pointwise = w.kernel_height == 1 && w.kernel_width == 1;
  const bool strided = w.stride_height > 1 || w.stride_width > 1;
  const bool unpadded = w.pad_top == 0 && w.pad_left == 0 && w.pad_bottom == 0 && w.pad_right == 0;
  // The last output reads input (OH - 1) x sh, which must lie inside the plane.
  const bool inside = w.output_height >= 1 && w.output_width >= 1 && w.stride_height >= 1 &&
                      w.stride_width >= 1 &&
                      (w.output_height - 1) * w.stride_height < w.input_height &&
                      (w.output_width - 1) * w.stride_width < w.input_width;
  return pointwise && strided && unpadded && inside && shape.batch >= 1 &&
         shape.input_channels >= 1;
}

bool subsampled_pointwise_preferred(const Conv2DShape& shape) {
  // bench_kernels --subsample-vs-default against the avx2 dispatch before it, one / two
  // threads, three runs (docs/cpu-kernels.md, "Session 13: 1x1 stride-2 convolutions as a
  // subsample"): int8 1x1/2 256 -> 512 from 56x56 0.84-0.94 / 0.83-0.93 of the pair tiles' time
  // (im2col along tap pieces), 512 -> 1024 from 28x28 0.77-0.86 / 0.78-0.88, 1024 -> 2048 from
  // 14x14 0.65-0.79 / 0.73-0.80 of the lanes'; float32 0.90-0.99 / 0.81-0.97 of the im2col
  // GEMM's (the float dispatch keeps its lanes' layers, dispatch.cc). Below 256 channels
  // (ResNet18's 64 -> 128 and 128 -> 256) it lost with a scalar copy (1.01-1.20) and ran
  // 0.81-1.08 with the SSE2 one in runs too noisy to tell: not taken.
  const int64_t group_channels = shape.input_channels / (shape.groups > 0 ? shape.groups : 1);
  return subsampled_pointwise_applies(shape) && group_channels >= kSubsampledPointwiseChannels;
}

Conv2DShape subsampled_pointwise_shape(const Conv2DShape& shape) {
  Conv2DShape inner = shape;
  reference::Window2D& w = inner.window;
  w.input_height = w.output_height;
  w.input_width = w.output_width;
  w.stride_height = w.stride_width = 1;
  // A 1x1 window reads no neighbour: its dilation does not matter.
  w.dilation_height = w.dilation_width = 1;
  return inner;
}

std::unique_ptr<Conv2DInt8> make_subsampled_pointwise_conv2d_int8(
    const Conv2DShape& shape, std::unique_ptr<Conv2DInt8> inner) {
  if (!inner || !subsampled_pointwise_applies(shape)) return nullptr;
  return std::make_unique<SubsampledPointwiseInt8>(shape, std::move(inner));
}

std::unique_ptr<Conv2DFloat> make_subsampled_pointwise_conv2d(const Conv2DShape& shape,
                                                              std::unique_ptr<Conv2DFloat> inner) {
  if (!inner || !subsampled_pointwise_applies(shape)) return nullptr;
  return std::make_unique<SubsampledPointwiseFloat>(shape, std::move(inner));
}

}  // namespace orknn::kernels::cpu::optimized
