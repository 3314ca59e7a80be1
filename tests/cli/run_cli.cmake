# Runs one tessera command line and checks its exit status and output (the CLI tests of
# CMakeLists.txt in this folder). Arguments, as -D definitions:
#   CMD          the command and its arguments, separated by '|'
#   RC           the expected exit status
#   MATCH        (optional) a regex that stdout and stderr, merged in order, must match
#   NO_MATCH     (optional) a regex they must not match
#   STDERR_LINES (optional) the number of lines stderr must have (then stdout and stderr are
#                read separately, and MATCH applies to stdout followed by stderr)
#   ENV          (optional) NAME=VALUE settings, separated by '|'
#   UNSET        (optional) names of variables to remove from the environment, separated by '|'
string(REPLACE "|" ";" cmd "${CMD}")
set(env_args "")
if(DEFINED ENV)
  string(REPLACE "|" ";" env_args "${ENV}")
endif()
if(DEFINED UNSET)
  string(REPLACE "|" ";" unset_names "${UNSET}")
  foreach(name IN LISTS unset_names)
    list(PREPEND env_args "--unset=${name}")
  endforeach()
endif()
if(DEFINED STDERR_LINES)
  execute_process(COMMAND ${CMAKE_COMMAND} -E env ${env_args} ${cmd} RESULT_VARIABLE rc
                  OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 120)
  set(all "${out}${err}")
  string(REGEX MATCHALL "\n" newlines "${err}")
  list(LENGTH newlines lines)
  if(NOT lines EQUAL STDERR_LINES)
    message(FATAL_ERROR "stderr has ${lines} lines, expected ${STDERR_LINES}:\n${err}")
  endif()
else()
  execute_process(COMMAND ${CMAKE_COMMAND} -E env ${env_args} ${cmd} RESULT_VARIABLE rc
                  OUTPUT_VARIABLE all ERROR_VARIABLE all TIMEOUT 120)
endif()
message("${all}")
if(NOT "${rc}" STREQUAL "${RC}")
  message(FATAL_ERROR "exit status ${rc}, expected ${RC}")
endif()
if(DEFINED MATCH AND NOT all MATCHES "${MATCH}")
  message(FATAL_ERROR "the output does not match '${MATCH}'")
endif()
if(DEFINED NO_MATCH AND all MATCHES "${NO_MATCH}")
  message(FATAL_ERROR "the output matches '${NO_MATCH}', which it must not")
endif()
