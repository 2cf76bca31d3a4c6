// C entry points of zero-copy memory: creating, importing, syncing and destroying memory objects,
// binding them to a context (inputs/outputs, internal and weight memory), and changing the input
// shapes of dynamic-shape models.
#include <cstring>
#include <vector>

#include "api/api_support.h"
#include "api/memory_registry.h"
#include "devices/device.h"

using orknn::DeviceMemory;
using orknn::invalid_argument;
using orknn::make_error;
using orknn::ok_status;
using orknn::Result;
using orknn::Status;
using orknn::StatusCode;
using orknn::api::call_api;
using orknn::api::call_on_context;
using orknn::api::ContextState;
using orknn::api::MemoryRegistry;

namespace {

constexpr uint64_t kKnownAllocationFlags =
    RKNN_FLAG_MEMORY_CACHEABLE | RKNN_FLAG_MEMORY_NON_CACHEABLE | RKNN_FLAG_MEMORY_TRY_ALLOC_SRAM |
    RKNN_MEM_FLAG_ALLOC_NO_CONTEXT;

// For functions that return a pointer: the object on success, NULL (and one log line) on failure.
template <typename Body>
rknn_tensor_mem* mem_or_null(const char* function, Body&& body) {
  rknn_tensor_mem* result = nullptr;
  call_api(function, [&]() -> Status {
    Result<rknn_tensor_mem*> created = body();
    if (!created.ok()) return created.status();
    result = created.value();
    return ok_status();
  });
  return result;
}

Status check_context(rknn_context context) {
  if (orknn::api::ContextRegistry::instance().find(context)) return ok_status();
  return make_error(StatusCode::kInvalidContext, "invalid context 0x", std::hex,
                    static_cast<uint64_t>(context), " (never created, or already destroyed)");
}

// The memory behind `mem`, refusing (without reading it) anything that is not a live object.
Result<std::shared_ptr<DeviceMemory>> live_memory(const rknn_tensor_mem* mem) {
  if (!mem) return invalid_argument("mem is NULL");
  std::shared_ptr<DeviceMemory> memory = MemoryRegistry::instance().find(mem);
  if (!memory) {
    return invalid_argument("mem ", static_cast<const void*>(mem),
                            " is not a live rknn_tensor_mem: please use rknn_tensor_mem from "
                            "rknn_create_mem* (it was never created by this runtime, or was "
                            "destroyed already)");
  }
  return memory;
}

// The allocator of rknn_create_mem*: the NPU driver's when there is an NPU. Devices are found
// on first use, so memory made before any rknn_init (RKNN_MEM_FLAG_ALLOC_NO_CONTEXT) comes
// from the same place as memory made after.
orknn::DeviceMemoryAllocator& memory_allocator() {
  (void)orknn::devices::available_devices();
  return orknn::device_memory_allocator();
}

Result<rknn_tensor_mem*> allocate(uint64_t size, bool cacheable) {
  if (size == 0) return invalid_argument("size is 0");
  if (size > UINT32_MAX) {
    return invalid_argument("size ", size, " does not fit rknn_tensor_mem.size (32 bits)");
  }
  ORKNN_ASSIGN_OR_RETURN(std::unique_ptr<DeviceMemory> memory,
                         memory_allocator().allocate(size, cacheable));
  return MemoryRegistry::instance().add(std::move(memory), RKNN_TENSOR_MEMORY_FLAGS_ALLOC_INSIDE);
}

// Which graph tensor an attr from INPUT_ATTR/OUTPUT_ATTR (or their NATIVE forms) means: the name
// decides, because inputs and outputs share index numbers.
struct IoTarget {
  bool is_input;
  size_t index;
};

Result<IoTarget> find_io_target(const orknn::exec::Session& session, const rknn_tensor_attr& attr) {
  const size_t name_length = strnlen(attr.name, RKNN_MAX_NAME_LEN);
  const std::string name(attr.name, name_length);
  const orknn::graph::Graph& graph = session.graph();
  auto input_name = [&](size_t i) { return graph.tensor(graph.inputs[i].tensor).name; };
  auto output_name = [&](size_t i) { return graph.tensor(graph.outputs[i]).name; };
  if (attr.index < session.input_count() && input_name(attr.index) == name) {
    return IoTarget{true, attr.index};
  }
  if (attr.index < session.output_count() && output_name(attr.index) == name) {
    return IoTarget{false, attr.index};
  }
  for (size_t i = 0; i < session.input_count(); ++i)
    if (input_name(i) == name) return IoTarget{true, i};
  for (size_t i = 0; i < session.output_count(); ++i)
    if (output_name(i) == name) return IoTarget{false, i};
  return invalid_argument("attr->name '", name, "' (index ", attr.index,
                          ") is neither an input nor an output of the model: pass the attr "
                          "from rknn_query(INPUT_ATTR/OUTPUT_ATTR), edited only in type, fmt, "
                          "pass_through and h_stride");
}

Result<orknn::exec::UserTensorFormat> format_from_attr(const rknn_tensor_attr& attr) {
  orknn::exec::UserTensorFormat format;
  ORKNN_ASSIGN_OR_RETURN(format.type,
                         orknn::api::data_type_from_rknn(orknn::api::enum_value(attr.type)));
  ORKNN_ASSIGN_OR_RETURN(format.layout,
                         orknn::api::layout_from_rknn(orknn::api::enum_value(attr.fmt)));
  format.pass_through = attr.pass_through != 0;
  format.w_stride = attr.w_stride;
  format.h_stride = attr.h_stride;
  return format;
}

// Converts an attr's dims (in its fmt) to the NCHW order the graph uses.
orknn::graph::Shape nchw_dims(const rknn_tensor_attr& attr) {
  const uint32_t rank = attr.n_dims > RKNN_MAX_DIMS ? RKNN_MAX_DIMS : attr.n_dims;
  orknn::graph::Shape dims(attr.dims, attr.dims + rank);
  if (rank == 4 && orknn::api::enum_value(attr.fmt) == RKNN_TENSOR_NHWC) {
    return {dims[0], dims[3], dims[1], dims[2]};
  }
  return dims;
}

}  // namespace

extern "C" {

rknn_tensor_mem* rknn_create_mem(rknn_context ctx, uint32_t size) {
  return mem_or_null("rknn_create_mem", [&]() -> Result<rknn_tensor_mem*> {
    ORKNN_RETURN_IF_ERROR(check_context(ctx));
    return allocate(size, true);
  });
}

rknn_tensor_mem* rknn_create_mem2(rknn_context ctx, uint64_t size, uint64_t alloc_flags) {
  return mem_or_null("rknn_create_mem2", [&]() -> Result<rknn_tensor_mem*> {
    if (!(alloc_flags & RKNN_MEM_FLAG_ALLOC_NO_CONTEXT)) ORKNN_RETURN_IF_ERROR(check_context(ctx));
    if (alloc_flags & ~kKnownAllocationFlags) {
      return invalid_argument("alloc_flags 0x", std::hex, alloc_flags, " has unknown bits 0x",
                              alloc_flags & ~kKnownAllocationFlags);
    }
    if ((alloc_flags & RKNN_FLAG_MEMORY_CACHEABLE) &&
        (alloc_flags & RKNN_FLAG_MEMORY_NON_CACHEABLE)) {
      return invalid_argument("alloc_flags: CACHEABLE and NON_CACHEABLE exclude each other");
    }
    // There is no SRAM on this device: TRY_ALLOC_SRAM falls back to DRAM, as documented.
    return allocate(size, !(alloc_flags & RKNN_FLAG_MEMORY_NON_CACHEABLE));
  });
}

rknn_tensor_mem* rknn_create_mem_from_fd(rknn_context ctx, int32_t fd, void* virt_addr,
                                         uint32_t size, int32_t offset) {
  return mem_or_null("rknn_create_mem_from_fd", [&]() -> Result<rknn_tensor_mem*> {
    ORKNN_RETURN_IF_ERROR(check_context(ctx));
    if (fd < 0) return invalid_argument("fd ", fd, " is negative");
    if (offset < 0) return invalid_argument("offset ", offset, " is negative");
    if (size == 0) return invalid_argument("size is 0");
    ORKNN_ASSIGN_OR_RETURN(
        std::unique_ptr<DeviceMemory> memory,
        memory_allocator().import(fd, virt_addr, size, static_cast<uint64_t>(offset)));
    return MemoryRegistry::instance().add(std::move(memory), RKNN_TENSOR_MEMORY_FLAGS_FROM_FD);
  });
}

rknn_tensor_mem* rknn_create_mem_from_phys(rknn_context ctx, uint64_t phys_addr, void* virt_addr,
                                           uint32_t size) {
  return mem_or_null("rknn_create_mem_from_phys", [&]() -> Result<rknn_tensor_mem*> {
    ORKNN_RETURN_IF_ERROR(check_context(ctx));
    if (size == 0) return invalid_argument("size is 0");
    return make_error(StatusCode::kDeviceUnavailable, "cannot import physical address 0x", std::hex,
                      phys_addr,
                      ": no device in this process can map physical memory (that needs an NPU "
                      "driver with physical import); use rknn_create_mem or "
                      "rknn_create_mem_from_fd with a dma-buf instead");
  });
}

rknn_tensor_mem* rknn_create_mem_from_mb_blk(rknn_context ctx, void* mb_blk, int32_t offset) {
  return mem_or_null("rknn_create_mem_from_mb_blk", [&]() -> Result<rknn_tensor_mem*> {
    ORKNN_RETURN_IF_ERROR(check_context(ctx));
    return orknn::unimplemented("MB_BLK memory is not supported on any platform");
  });
}

int rknn_destroy_mem(rknn_context ctx, rknn_tensor_mem* mem) {
  return call_api("rknn_destroy_mem", [&]() -> Status {
    ORKNN_RETURN_IF_ERROR(live_memory(mem).status());
    // A context that bound the memory keeps its mapping until it is rebound or destroyed.
    MemoryRegistry::instance().remove(mem);
    return ok_status();
  });
}

int rknn_mem_sync(rknn_context context, rknn_tensor_mem* mem, rknn_mem_sync_mode mode) {
  return call_api("rknn_mem_sync", [&]() -> Status {
    const int32_t sync_mode = orknn::api::enum_value(mode);
    ORKNN_ASSIGN_OR_RETURN(std::shared_ptr<DeviceMemory> memory, live_memory(mem));
    orknn::SyncDirection direction;
    switch (sync_mode) {
      case RKNN_MEMORY_SYNC_TO_DEVICE:
        direction = orknn::SyncDirection::kToDevice;
        break;
      case RKNN_MEMORY_SYNC_FROM_DEVICE:
        direction = orknn::SyncDirection::kFromDevice;
        break;
      case RKNN_MEMORY_SYNC_BIDIRECTIONAL:
        direction = orknn::SyncDirection::kBidirectional;
        break;
      default:
        return invalid_argument("mode ", sync_mode, " is not 1, 2 or 3");
    }
    return memory->sync(direction, 0, memory->size());
  });
}

int rknn_set_io_mem(rknn_context ctx, rknn_tensor_mem* mem, rknn_tensor_attr* attr) {
  return call_on_context("rknn_set_io_mem", ctx, [&](ContextState& state) -> Status {
    if (!attr) return invalid_argument("attr is NULL");
    ORKNN_ASSIGN_OR_RETURN(std::shared_ptr<DeviceMemory> memory, live_memory(mem));
    orknn::exec::Session& session = *state.session;
    ORKNN_ASSIGN_OR_RETURN(IoTarget target, find_io_target(session, *attr));
    ORKNN_ASSIGN_OR_RETURN(orknn::exec::UserTensorFormat format, format_from_attr(*attr));
    if (target.is_input) return session.bind_input(target.index, std::move(memory), format);
    return session.bind_output(target.index, std::move(memory), format);
  });
}

int rknn_set_weight_mem(rknn_context ctx, rknn_tensor_mem* mem) {
  return call_on_context("rknn_set_weight_mem", ctx, [&](ContextState& state) -> Status {
    ORKNN_ASSIGN_OR_RETURN(std::shared_ptr<DeviceMemory> memory, live_memory(mem));
    return state.session->set_weight_memory(std::move(memory));
  });
}

int rknn_set_internal_mem(rknn_context ctx, rknn_tensor_mem* mem) {
  return call_on_context("rknn_set_internal_mem", ctx, [&](ContextState& state) -> Status {
    ORKNN_ASSIGN_OR_RETURN(std::shared_ptr<DeviceMemory> memory, live_memory(mem));
    return state.session->set_internal_memory(std::move(memory));
  });
}

int rknn_set_input_shapes(rknn_context ctx, uint32_t n_inputs, rknn_tensor_attr attr[]) {
  return call_on_context("rknn_set_input_shapes", ctx, [&](ContextState& state) -> Status {
    if (!attr) return invalid_argument("attr is NULL");
    orknn::exec::Session& session = *state.session;
    if (n_inputs != session.input_count()) {
      return invalid_argument("n_inputs ", n_inputs, " != model input count ",
                              session.input_count());
    }
    std::vector<orknn::graph::Shape> shapes(n_inputs);
    for (uint32_t i = 0; i < n_inputs; ++i) {
      if (attr[i].index >= n_inputs) {
        return invalid_argument("attr[", i, "].index ", attr[i].index, " >= input count ",
                                n_inputs);
      }
      shapes[attr[i].index] = nchw_dims(attr[i]);
    }
    return session.set_input_shapes(shapes);
  });
}

int rknn_set_input_shape(rknn_context ctx, rknn_tensor_attr* attr) {
  return call_on_context("rknn_set_input_shape", ctx, [&](ContextState& state) -> Status {
    if (!attr) return invalid_argument("attr is NULL");
    orknn::exec::Session& session = *state.session;
    if (attr->index >= session.input_count()) {
      return invalid_argument("attr->index ", attr->index, " >= input count ",
                              session.input_count());
    }
    // The older single-input form: the other inputs keep their current shapes.
    std::vector<orknn::graph::Shape> shapes;
    for (size_t i = 0; i < session.input_count(); ++i) {
      shapes.push_back(session.current_input_shape(i));
    }
    shapes[attr->index] = nchw_dims(*attr);
    return session.set_input_shapes(shapes);
  });
}

}  // extern "C"
