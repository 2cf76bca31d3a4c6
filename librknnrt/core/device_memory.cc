#include "core/device_memory.h"

#include <fcntl.h>
#include <linux/dma-buf.h>
#include <linux/dma-heap.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <mutex>

namespace orknn {
namespace {

size_t page_size() {
  static const size_t size = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  return size;
}

Status errno_error(StatusCode code, const std::string& what) {
  return make_error(code, what, ": ", std::strerror(errno));
}

// Maps `size` bytes of `fd` from `offset` (which need not be page-aligned) read-write shared.
Result<std::unique_ptr<DeviceMemory>> map_fd(int fd, size_t size, uint64_t offset, bool owned,
                                             bool cacheable, bool is_dma_buf, std::string source) {
  const uint64_t aligned_offset = offset / page_size() * page_size();
  const size_t lead = static_cast<size_t>(offset - aligned_offset);
  const size_t mapping_size = lead + size;
  void* mapping = mmap(nullptr, mapping_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
                       static_cast<off_t>(aligned_offset));
  if (mapping == MAP_FAILED) {
    Status status =
        errno_error(StatusCode::kOutOfMemory,
                    str_cat("cannot map ", size, " bytes of fd ", fd, " at offset ", offset));
    if (owned) close(fd);
    return status;
  }
  return std::make_unique<DeviceMemory>(fd, mapping, mapping_size,
                                        static_cast<uint8_t*>(mapping) + lead, size, offset, owned,
                                        cacheable, is_dma_buf, std::move(source));
}

class MemfdAllocator final : public DeviceMemoryAllocator {
 public:
  const char* name() const override { return "memfd"; }
  Result<std::unique_ptr<DeviceMemory>> allocate(size_t size, bool cacheable) override {
    const int fd = static_cast<int>(memfd_create("rknn_tensor_mem", MFD_CLOEXEC));
    if (fd < 0) return errno_error(StatusCode::kOutOfMemory, "memfd_create failed");
    if (ftruncate(fd, static_cast<off_t>(size)) != 0) {
      Status status = errno_error(StatusCode::kOutOfMemory,
                                  str_cat("cannot size the memfd to ", size, " bytes"));
      close(fd);
      return status;
    }
    // Plain shared memory is coherent with every CPU core: there is no cache to manage.
    return map_fd(fd, size, 0, true, cacheable, false, "memfd");
  }
};

class DmaHeapAllocator final : public DeviceMemoryAllocator {
 public:
  explicit DmaHeapAllocator(std::string directory) : directory_(std::move(directory)) {}
  const char* name() const override { return "dma_heap"; }
  Result<std::unique_ptr<DeviceMemory>> allocate(size_t size, bool cacheable) override {
    // Uncached heaps exist only on some kernels; the cached system heap always does.
    std::string heap = directory_ + (cacheable ? "/system" : "/system-uncached");
    if (!cacheable && access(heap.c_str(), R_OK) != 0) heap = directory_ + "/system";
    const int heap_fd = open(heap.c_str(), O_RDONLY | O_CLOEXEC);
    if (heap_fd < 0) return errno_error(StatusCode::kOutOfMemory, "cannot open " + heap);
    dma_heap_allocation_data request{};
    request.len = align_to_page(size);
    request.fd_flags = O_RDWR | O_CLOEXEC;
    const int result = ioctl(heap_fd, DMA_HEAP_IOCTL_ALLOC, &request);
    const int saved_errno = errno;
    close(heap_fd);
    if (result != 0) {
      errno = saved_errno;
      return errno_error(StatusCode::kOutOfMemory,
                         str_cat("DMA_HEAP_IOCTL_ALLOC of ", size, " bytes from ", heap));
    }
    return map_fd(static_cast<int>(request.fd), size, 0, true, cacheable, true,
                  "dma_heap:" + heap.substr(directory_.size() + 1));
  }

 private:
  static size_t align_to_page(size_t size) {
    return (size + page_size() - 1) / page_size() * page_size();
  }
  std::string directory_;
};

std::mutex& allocator_mutex() {
  static std::mutex* mutex = new std::mutex();
  return *mutex;
}

std::unique_ptr<DeviceMemoryAllocator>& installed_allocator() {
  static auto* allocator = new std::unique_ptr<DeviceMemoryAllocator>();
  return *allocator;
}

std::unique_ptr<DeviceMemoryAllocator> make_default_allocator() {
  const char* forced = std::getenv("ORKNN_MEMORY_ALLOCATOR");
  const bool want_memfd = forced && std::strcmp(forced, "memfd") == 0;
  if (!want_memfd) {
    if (auto heap = make_dma_heap_allocator("/dev/dma_heap")) return heap;
  }
  return make_memfd_allocator();
}

}  // namespace

DeviceMemory::DeviceMemory(int fd, void* mapping, size_t mapping_size, uint8_t* data, size_t size,
                           uint64_t fd_offset, bool owned, bool cacheable, bool is_dma_buf,
                           std::string source)
    : fd_(fd),
      mapping_(mapping),
      mapping_size_(mapping_size),
      data_(data),
      size_(size),
      fd_offset_(fd_offset),
      owned_(owned),
      cacheable_(cacheable),
      is_dma_buf_(is_dma_buf),
      source_(std::move(source)) {}

DeviceMemory::~DeviceMemory() {
  if (mapping_) munmap(mapping_, mapping_size_);
  if (owned_ && fd_ >= 0) close(fd_);
}

Status DeviceMemory::sync(SyncDirection direction, size_t offset, size_t length) const {
  if (offset > size_ || length > size_ - offset) {
    return invalid_argument("sync range [", offset, ", ", offset + length, ") is outside the ",
                            size_, "-byte memory");
  }
  if (!is_dma_buf_ || !cacheable_) return ok_status();
  // The CPU is the device on this path: "to device" ends a CPU access, "from device" starts one.
  dma_buf_sync sync{};
  switch (direction) {
    case SyncDirection::kToDevice:
      sync.flags = DMA_BUF_SYNC_END | DMA_BUF_SYNC_WRITE;
      break;
    case SyncDirection::kFromDevice:
      sync.flags = DMA_BUF_SYNC_START | DMA_BUF_SYNC_READ;
      break;
    case SyncDirection::kBidirectional:
      sync.flags = DMA_BUF_SYNC_END | DMA_BUF_SYNC_RW;
      if (ioctl(fd_, DMA_BUF_IOCTL_SYNC, &sync) != 0) break;
      sync.flags = DMA_BUF_SYNC_START | DMA_BUF_SYNC_RW;
      break;
  }
  if (ioctl(fd_, DMA_BUF_IOCTL_SYNC, &sync) != 0) {
    return errno_error(StatusCode::kFailed, str_cat("DMA_BUF_IOCTL_SYNC on fd ", fd_));
  }
  return ok_status();
}

Result<std::unique_ptr<DeviceMemory>> DeviceMemoryAllocator::import(int fd, void* virtual_address,
                                                                    size_t size, uint64_t offset) {
  return import_device_memory(fd, virtual_address, size, offset);
}

std::unique_ptr<DeviceMemoryAllocator> make_memfd_allocator() {
  return std::make_unique<MemfdAllocator>();
}

std::unique_ptr<DeviceMemoryAllocator> make_dma_heap_allocator(const std::string& directory) {
  if (access((directory + "/system").c_str(), R_OK) != 0) return nullptr;
  return std::make_unique<DmaHeapAllocator>(directory);
}

DeviceMemoryAllocator& device_memory_allocator() {
  std::lock_guard<std::mutex> lock(allocator_mutex());
  std::unique_ptr<DeviceMemoryAllocator>& allocator = installed_allocator();
  if (!allocator) allocator = make_default_allocator();
  return *allocator;
}

void set_device_memory_allocator(std::unique_ptr<DeviceMemoryAllocator> allocator) {
  std::lock_guard<std::mutex> lock(allocator_mutex());
  installed_allocator() = std::move(allocator);
}

Result<std::unique_ptr<DeviceMemory>> import_device_memory(int fd, void* virtual_address,
                                                           size_t size, uint64_t offset) {
  struct stat info;
  if (fstat(fd, &info) != 0) {
    return errno_error(StatusCode::kInvalidArgument, str_cat("fd ", fd, " is not an open file"));
  }
  // dma-bufs report no size through fstat on older kernels; check only when one is known.
  if (info.st_size > 0 && offset + size > static_cast<uint64_t>(info.st_size)) {
    return invalid_argument("offset ", offset, " + size ", size, " > size of fd ", fd, " (",
                            info.st_size, " bytes)");
  }
  dma_buf_sync probe{};
  probe.flags = DMA_BUF_SYNC_START | DMA_BUF_SYNC_RW;
  const bool is_dma_buf = ioctl(fd, DMA_BUF_IOCTL_SYNC, &probe) == 0;
  if (is_dma_buf) {
    probe.flags = DMA_BUF_SYNC_END | DMA_BUF_SYNC_RW;
    ioctl(fd, DMA_BUF_IOCTL_SYNC, &probe);
  }
  if (!virtual_address) return map_fd(fd, size, offset, false, true, is_dma_buf, "import");
  uint8_t* data = static_cast<uint8_t*>(virtual_address) + offset;
  return std::make_unique<DeviceMemory>(fd, nullptr, 0, data, size, offset, false, true, is_dma_buf,
                                        "import");
}

}  // namespace orknn
