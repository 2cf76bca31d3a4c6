# orknn_cmocka_environment(TEST name [VARIABLES name=value...])
# Sets the environment a CTest run of a cmocka program starts with: the given variables plus
# CMOCKA_TEST_ABORT=1, so that a failed check aborts the program. cmocka's default is a longjmp
# out of the test, which skips C++ destructors: a thread pool left behind that way has workers
# waiting on stack memory the next test reuses, and the program hung after printing the
# failure instead of exiting. Every run of a cmocka program sets its environment through this
# function: an ENVIRONMENT property set elsewhere replaces the variable (until session 25, five
# runs had lost it that way and four never had it). tests/check_cmocka_environment.py checks.
function(orknn_cmocka_environment)
  cmake_parse_arguments(ARG "" "TEST" "VARIABLES" ${ARGN})
  set(variables ${ARG_VARIABLES})
  list(APPEND variables CMOCKA_TEST_ABORT=1)
  set_tests_properties(${ARG_TEST} PROPERTIES ENVIRONMENT "${variables}")
endfunction()
