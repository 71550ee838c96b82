# missing_source.cmake: configures a copy of the tree (the build files, src/, include/,
# python/) from which src/core/raw.c, a listed source of the library, was deleted, and
# checks that configuring fails with an error that names the file (a deleted file must not
# drop out of the library unnoticed).
#   cmake -DSOURCE=<tree> -DWORK=<scratch folder> -DGENERATOR=<generator> -P missing_source.cmake
if(NOT SOURCE OR NOT WORK)
  message(FATAL_ERROR "usage: cmake -DSOURCE=tree -DWORK=folder [-DGENERATOR=Ninja] -P missing_source.cmake")
endif()
file(REMOVE_RECURSE ${WORK})
file(MAKE_DIRECTORY ${WORK}/tree)
foreach(part CMakeLists.txt cmake src include python)
  file(COPY ${SOURCE}/${part} DESTINATION ${WORK}/tree)
endforeach()
file(REMOVE ${WORK}/tree/src/core/raw.c)
set(gen "")
if(GENERATOR)
  set(gen -G ${GENERATOR})
endif()
execute_process(COMMAND ${CMAKE_COMMAND} -S ${WORK}/tree -B ${WORK}/build ${gen} -DDEVTRACE_BUILD_TESTS=OFF
                        -DDEVTRACE_BUILD_EXAMPLES=OFF -DDEVTRACE_BUILD_BENCH=OFF
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
file(REMOVE_RECURSE ${WORK})
if(rc EQUAL 0)
  message(FATAL_ERROR "the tree without src/core/raw.c configured (exit 0): a deleted source is dropped silently")
endif()
if(NOT err MATCHES "core/raw\\.c")
  message(FATAL_ERROR "configuring failed (exit ${rc}) without naming core/raw.c:\n${err}")
endif()
message(STATUS "layers.missing_source_fails_configure: configure failed (exit ${rc}) naming core/raw.c")
