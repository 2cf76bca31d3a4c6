// cmocka for the converter tests. Include it after every other header: its fail() macro would
// break the C++ standard headers that declare basic_ios::fail().
#pragma once

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

// cmocka 1.1 declares its functions without C linkage markers.
extern "C" {
#include <cmocka.h>
}
