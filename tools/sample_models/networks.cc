// The sample networks. Shapes are computed here (NetworkBuilder) and checked by the runtime
// against its own shape inference when a model is loaded.
#include "networks.h"

namespace orknn::sample_models {
namespace {

model::InputOptions image_input(int channels) {
  model::InputOptions options;
  options.mean.assign(static_cast<size_t>(channels), 127.5f);
  options.std.assign(static_cast<size_t>(channels), 127.5f);
  options.nhwc_layout = true;  // applications pass uint8 NHWC pixels
  return options;
}

// Conv + Relu6, either fused (Conv activation attributes) or as a separate Clip node.
int conv_relu6(NetworkBuilder& net, int x, NetworkBuilder::ConvSpec spec, bool fuse,
               const std::string& name) {
  spec.fused_relu6 = fuse;
  const int y = net.conv(x, spec, name);
  return fuse ? y : net.clip(y, 0.0f, 6.0f, name + ".relu6");
}

// MobileNetV2 inverted residual: 1x1 expand + Relu6, 3x3 depthwise + Relu6, 1x1 linear project,
// and a residual Add when the block keeps the shape.
int inverted_residual(NetworkBuilder& net, int x, int64_t expansion, int64_t output_channels,
                      int64_t stride, bool fuse, const std::string& name) {
  const int64_t input_channels = net.shape(x)[1];
  const int64_t hidden = input_channels * expansion;
  int y = x;
  if (expansion != 1) y = conv_relu6(net, y, {hidden, 1, 1, 1}, fuse, name + ".expand");
  y = conv_relu6(net, y, {hidden, 3, stride, hidden}, fuse, name + ".depthwise");
  y = net.conv(y, {output_channels, 1, 1, 1, true}, name + ".project");
  if (stride == 1 && input_channels == output_channels) y = net.add(x, y, name + ".residual");
  return y;
}

}  // namespace

Network mobilenet_mini(uint64_t seed, bool fuse_activations) {
  NetworkBuilder net("mobilenet_mini", seed);
  net.set_custom_string("model=mobilenet_mini;classes=1000");
  const bool fuse = fuse_activations;
  int x = net.input("input", {1, 3, 224, 224}, image_input(3));
  x = conv_relu6(net, x, {16, 3, 2, 1}, fuse, "stem");  // 112x112
  struct Block {
    int64_t expansion, channels, stride;
  };
  // About 35 M multiply-accumulates (70 MFLOPs) in all.
  const Block blocks[] = {
      {1, 8, 1},               // 112x112
      {3, 16, 2}, {3, 16, 1},  // 56x56
      {4, 24, 2}, {4, 24, 1},  // 28x28
      {4, 32, 2}, {4, 32, 1},  // 14x14
      {4, 64, 2},              // 7x7
  };
  int index = 0;
  for (const Block& block : blocks) {
    x = inverted_residual(net, x, block.expansion, block.channels, block.stride, fuse,
                          str_cat("block", index++));
  }
  x = conv_relu6(net, x, {320, 1, 1, 1}, fuse, "head");
  x = net.global_average_pool(x, "pool");
  x = net.flatten(x, "flatten");
  // Pooled Relu6 features are small and similar between images; these spreads make the logits
  // differ by several units, so the softmax is peaked like a trained classifier's (top-1
  // probability 0.3 to 0.98 on the synthetic images) and the ranking depends on the image.
  x = net.gemm(x, 1000, 0.5f, 1.0f, "classifier");
  x = net.softmax(x, "softmax");
  net.output(x);
  return net.take();
}

Network two_inputs(uint64_t seed) {
  NetworkBuilder net("two_inputs", seed);
  net.set_custom_string("model=two_inputs");
  const int gray = net.input("input_gray", {1, 1, 128, 128}, image_input(1));
  const int rgb = net.input("input_rgb", {1, 3, 128, 128}, image_input(3));
  const int a = net.conv(gray, {8, 3, 1, 1, true}, "conv_gray");
  const int b = net.conv(rgb, {8, 3, 1, 1, true}, "conv_rgb");
  net.output(net.add(a, b, "sum"));
  return net.take();
}

Network tiny(uint64_t seed) {
  NetworkBuilder net("tiny", seed);
  net.set_custom_string("model=tiny;classes=10");
  const int x = net.input("input", {1, 3, 32, 32}, image_input(3));
  int y = net.relu(net.conv(x, {8, 3, 1, 1}, "conv"), "relu");  // 8x32x32
  const int pooled = net.max_pool(y, 2, 2, "max_pool");         // 8x16x16
  y = net.clip(net.conv(pooled, {8, 1, 1, 1}, "pointwise"), 0.0f, 6.0f, "clip");
  y = net.add(pooled, y, "add");
  y = net.mul_per_channel(y, 0.25f, 1.0f, "mul");
  y = net.sigmoid(y, "sigmoid");
  const int averaged = net.average_pool(y, 2, 2, "average_pool");  // 8x8x8
  const int depthwise = net.conv(averaged, {8, 3, 1, 8, true}, "depthwise");
  const int features = net.concat({averaged, depthwise}, 1, "concat");  // 16x8x8
  y = net.global_average_pool(features, "global_pool");
  y = net.reshape(y, {1, -1}, "reshape");  // 1x16
  y = net.gemm(y, 10, 1.0f, 0.1f, "classifier");
  net.output(net.softmax(y, "softmax"));
  net.output(features);
  return net.take();
}

}  // namespace orknn::sample_models
