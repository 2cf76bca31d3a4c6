// The same static checks compiled as C++: C treats an enum as compatible with its underlying
// integer type, C++ does not, so only this build notices a field declared uint32_t where the
// reference says rknn_tensor_format (and vice versa).
#include "abi_layout_static_asserts.h"
