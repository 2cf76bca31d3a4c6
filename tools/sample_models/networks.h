// Definitions of the sample networks (see sample_models.h for what each is).
#pragma once

#include <cstdint>

#include "network.h"

namespace orknn::sample_models {

Network mobilenet_mini(uint64_t seed, bool fuse_activations);
Network two_inputs(uint64_t seed);
Network tiny(uint64_t seed);

}  // namespace orknn::sample_models
