# Installs the built spmat into a scratch prefix, checks what was installed, then configures,
# builds and runs the consumer (which also compiles every installed header on its own).
#   -DSPMAT_BUILD_DIR, -DSPMAT_CONSUMER_DIR, -DSCRATCH: the build, tests/consumer, a scratch dir
#   -DWITH_CUDA: whether spmat was built with the CUDA backend; -DCUDA_ARCH: its architectures
#   -DCMAKE_AR: the archiver, to list the members of a static libspmat.a
cmake_minimum_required(VERSION 3.25)
file(REMOVE_RECURSE ${SCRATCH})
set(prefix ${SCRATCH}/prefix)
execute_process(COMMAND ${CMAKE_COMMAND} --install ${SPMAT_BUILD_DIR} --prefix ${prefix}
  RESULT_VARIABLE rc)
if(rc)
  message(FATAL_ERROR "install failed: ${rc}")
endif()

# Only public headers are installed: nothing of the test support (gtest, tests/), of the
# benchmark harness or of the formats' internals.
file(GLOB_RECURSE installed RELATIVE ${prefix}/include ${prefix}/include/spmat/*)
list(LENGTH installed count)
message(STATUS "installed ${count} spmat headers: ${installed}")
if(NOT "spmat/spmat.hpp" IN_LIST installed OR NOT "spmat/config.hpp" IN_LIST installed)
  message(FATAL_ERROR "spmat/spmat.hpp or spmat/config.hpp was not installed")
endif()
foreach(header IN LISTS installed)
  if(header MATCHES "^spmat/(bench|formats|model|vendor)/|_test|test_support")
    message(FATAL_ERROR "an internal header was installed: ${header}")
  endif()
  file(STRINGS ${prefix}/include/${header} test_includes REGEX "#include.*(gtest|\"tests/)")
  if(test_includes)
    message(FATAL_ERROR "installed ${header} includes test support: ${test_includes}")
  endif()
endforeach()

# The installed archive holds the library only: the benchmark harness is spmat_bench's.
file(GLOB archive ${prefix}/lib*/libspmat.a)
if(archive AND CMAKE_AR)
  execute_process(COMMAND ${CMAKE_AR} t ${archive} OUTPUT_VARIABLE members RESULT_VARIABLE rc)
  if(rc)
    message(FATAL_ERROR "${CMAKE_AR} t ${archive} failed: ${rc}")
  endif()
  string(REGEX MATCHALL "(harness|json|report|suites)\\.cpp\\.o" bench_members "${members}")
  if(bench_members)
    message(FATAL_ERROR "${archive} holds the benchmark harness: ${bench_members}")
  endif()
endif()

set(extra)
if(WITH_CUDA)
  if(CUDA_ARCH)
    list(APPEND extra -DCMAKE_CUDA_ARCHITECTURES=${CUDA_ARCH})
  endif()
else()
  # A CPU-only spmat names no CUDA library in its exported targets, and a consumer configures,
  # builds and links with the CUDA toolkit out of reach of find_package.
  file(GLOB target_files ${prefix}/lib*/cmake/spmat/spmatTargets*.cmake)
  foreach(f IN LISTS target_files)
    file(STRINGS ${f} cuda_lines REGEX "CUDA|cudart|cusparse")
    if(cuda_lines)
      message(FATAL_ERROR "a CPU-only spmat exports CUDA in ${f}: ${cuda_lines}")
    endif()
  endforeach()
  list(APPEND extra -DCMAKE_DISABLE_FIND_PACKAGE_CUDAToolkit=ON)
endif()
execute_process(COMMAND ${CMAKE_COMMAND} -S ${SPMAT_CONSUMER_DIR} -B ${SCRATCH}/build
  -DCMAKE_PREFIX_PATH=${prefix} ${extra} RESULT_VARIABLE rc)
if(rc)
  message(FATAL_ERROR "configuring the consumer failed: ${rc}")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} --build ${SCRATCH}/build --parallel 2 RESULT_VARIABLE rc)
if(rc)
  message(FATAL_ERROR "building the consumer (and each installed header alone) failed: ${rc}")
endif()
execute_process(COMMAND ${SCRATCH}/build/consumer ${SCRATCH} OUTPUT_VARIABLE out RESULT_VARIABLE rc)
if(rc OR NOT out STREQUAL "3 7\n")
  message(FATAL_ERROR "consumer printed '${out}' (exit ${rc}), expected '3 7'")
endif()
message(STATUS "consumer linked against the installed spmat and printed: ${out}")
