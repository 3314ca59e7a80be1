# Checks that one compile-fail case does NOT compile and that the compiler's message
# names the problem (the text after "// expect:" on the case's first line). A case
# whose expectation is "COMPILES" must compile.
#   cmake -DCXX=<compiler> -DINCLUDE=<include dir> -DCASE=<file.cpp> -P check.cmake
file(STRINGS "${CASE}" first LIMIT_COUNT 1)
string(REGEX REPLACE "^// expect: *" "" expect "${first}")
execute_process(
  COMMAND "${CXX}" -std=c++20 -fsyntax-only "-I${INCLUDE}" "${CASE}"
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(expect STREQUAL "COMPILES")
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${CASE} should compile but did not:\n${err}")
  endif()
  message(STATUS "${CASE}: compiles, as expected")
  return()
endif()
if(rc EQUAL 0)
  message(FATAL_ERROR "${CASE} compiled, but it must not (expected: ${expect})")
endif()
string(FIND "${out}${err}" "${expect}" pos)
if(pos EQUAL -1)
  message(FATAL_ERROR "${CASE} failed to compile, but the message does not contain \"${expect}\":\n${err}")
endif()
message(STATUS "${CASE}: does not compile, message names the problem: ${expect}")
