// The conv buffer of one emulated core: a convolution task must configure banks that hold what
// it reads, as hardware would otherwise overrun the buffer. The emulator refuses such a task
// (the job fails with the reason) so the tests prove the compiler's CBUF splitting.
#include "core/status.h"
#include "driver_shim/emu/block_support.h"
#include "driver_shim/emu/emulator.h"

namespace orknn::driver_shim::emu {

using namespace npu_reg;

bool Emulator::check_cbuf(CoreRegisters& r, uint32_t input_width, uint32_t input_rows,
                          uint32_t input_channels, uint32_t precision, uint64_t weight_bytes) {
  const uint32_t config = r.get(kCnaCbufCon0);
  const uint32_t data_banks = field(config, 3, 0);
  const uint32_t weight_banks = field(config, 7, 4);
  const bool reuse = (config & kCbufWeightReuse) != 0;
  const uint32_t entries = field(r.get(kCnaCbufCon1), 13, 0);
  const uint32_t block = static_cast<uint32_t>(channel_block(precision));
  const uint64_t row_bytes = uint64_t{input_width} * ((input_channels + block - 1) / block) *
                             block * element_bytes(precision);
  const uint64_t row_entries = (row_bytes + kCbufEntryBytes - 1) / kCbufEntryBytes;
  const uint64_t weight_banks_needed = (weight_bytes + kCbufBankBytes - 1) / kCbufBankBytes + 1;
  if (data_banks == 0 || weight_banks == 0 || data_banks + weight_banks > uint32_t(kCbufBanks)) {
    r.fault = str_cat("CBUF_CON0 asks for ", data_banks, " data + ", weight_banks,
                      " weight banks; the conv buffer has ", kCbufBanks,
                      " and each part needs at least one");
  } else if (entries < row_entries) {
    r.fault = str_cat("CBUF_CON1 DATA_ENTRIES = ", entries, " but an input row of ", input_width,
                      " x ", input_channels, " channels takes ", row_entries, " entries");
  } else if (uint64_t{entries} * input_rows > uint64_t{data_banks} * kCbufEntriesPerBank) {
    r.fault = str_cat(input_rows, " input rows of ", entries, " entries do not fit ", data_banks,
                      " data banks (", data_banks * kCbufEntriesPerBank, " entries)");
  } else if (weight_banks_needed > weight_banks) {
    r.fault = str_cat(weight_bytes, " weight bytes need ", weight_banks_needed,
                      " CBUF banks, CBUF_CON0 gives ", weight_banks);
  } else if (reuse && (r.resident_weights != r.get(kCnaDcompAddr0) ||
                       r.resident_weight_bytes != weight_bytes)) {
    r.fault = str_cat("WEIGHT_REUSE is set but the conv buffer holds ", r.resident_weight_bytes,
                      " weight bytes from 0x", std::hex, r.resident_weights, ", not ", std::dec,
                      weight_bytes, " from 0x", std::hex, r.get(kCnaDcompAddr0));
  }
  if (!r.fault.empty()) return false;
  r.resident_weights = r.get(kCnaDcompAddr0);
  r.resident_weight_bytes = weight_bytes;
  return true;
}

}  // namespace orknn::driver_shim::emu
