// Builds vendor_style_app.c as C++: most vendor demo programs are C++, so the public headers
// must compile cleanly in both languages. There is deliberately no second copy of the code.
#include "vendor_style_app.c"
