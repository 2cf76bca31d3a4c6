// A device that supports nothing: the smallest complete Device, a template for new ones, and a
// way to test that the partitioner falls through to the next device.
#include "devices/device.h"

namespace orknn::devices {
namespace {

class NullDevice final : public Device {
 public:
  const char* name() const override { return "NULL"; }
  bool supports(const graph::Graph&, const graph::Node&) const override { return false; }
  Result<std::unique_ptr<Executable>> compile(const graph::Graph&, const std::vector<size_t>&,
                                              const std::vector<graph::Shape>&) override {
    return unimplemented("the null device compiles nothing");
  }
};

}  // namespace

std::shared_ptr<Device> make_null_device() {
  return std::make_shared<NullDevice>();
}

}  // namespace orknn::devices
