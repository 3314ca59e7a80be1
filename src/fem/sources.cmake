# Sources of tessera's finite-element layer. Host-only files are compiled by the host
# compiler; files that launch kernels are also listed in tessera_cuda_sources() so that
# nvcc compiles them in CUDA builds.
set(TESSERA_FEM_KERNEL_SOURCES
  ${CMAKE_CURRENT_LIST_DIR}/restriction.cpp
  ${CMAKE_CURRENT_LIST_DIR}/geometric_factors.cpp
  ${CMAKE_CURRENT_LIST_DIR}/interpolate.cpp
  ${CMAKE_CURRENT_LIST_DIR}/interpolate_values.cpp
  ${CMAKE_CURRENT_LIST_DIR}/interpolate_grads.cpp
  ${CMAKE_CURRENT_LIST_DIR}/operator.cpp
  ${CMAKE_CURRENT_LIST_DIR}/operator/apply.cpp
  ${CMAKE_CURRENT_LIST_DIR}/operator/launch.cpp
  ${CMAKE_CURRENT_LIST_DIR}/operator/launch_exact.cpp
  ${CMAKE_CURRENT_LIST_DIR}/assembly.cpp
  ${CMAKE_CURRENT_LIST_DIR}/assembly_load.cpp
  ${CMAKE_CURRENT_LIST_DIR}/multigrid.cpp
  ${CMAKE_CURRENT_LIST_DIR}/transfer.cpp)
target_sources(tessera PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/quadrature.cpp
  ${CMAKE_CURRENT_LIST_DIR}/simplex_rules.cpp
  ${CMAKE_CURRENT_LIST_DIR}/basis1d.cpp
  ${CMAKE_CURRENT_LIST_DIR}/basis.cpp
  ${CMAKE_CURRENT_LIST_DIR}/simplex_nodes.cpp
  ${CMAKE_CURRENT_LIST_DIR}/reference_element.cpp
  ${CMAKE_CURRENT_LIST_DIR}/mesh.cpp
  ${CMAKE_CURRENT_LIST_DIR}/mesh_geometry.cpp
  ${CMAKE_CURRENT_LIST_DIR}/mesh_generators.cpp
  ${CMAKE_CURRENT_LIST_DIR}/mesh_curved.cpp
  ${CMAKE_CURRENT_LIST_DIR}/h1_space.cpp
  ${CMAKE_CURRENT_LIST_DIR}/field_functions.cpp
  ${CMAKE_CURRENT_LIST_DIR}/element_tables.cpp
  ${CMAKE_CURRENT_LIST_DIR}/operator/choice.cpp
  ${CMAKE_CURRENT_LIST_DIR}/operator/cpu_batched.cpp
  ${CMAKE_CURRENT_LIST_DIR}/operator/cpu_contract.cpp
  ${CMAKE_CURRENT_LIST_DIR}/operator/cpu_interp.cpp
  ${CMAKE_CURRENT_LIST_DIR}/operator/cpu_setup.cpp
  ${CMAKE_CURRENT_LIST_DIR}/assembly_cpu.cpp
  ${CMAKE_CURRENT_LIST_DIR}/refinement_transfer.cpp
  ${CMAKE_CURRENT_LIST_DIR}/transfer_cpu.cpp
  ${TESSERA_FEM_KERNEL_SOURCES})
tessera_cuda_sources(${TESSERA_FEM_KERNEL_SOURCES})
# The interpolation kernels launch up to 512 threads per block (interpolate.cpp,
# kMaxBlockThreads): at most 128 registers per thread keeps every one of them launchable. Only
# the gradient kernels get the limit (they use up to ~150 registers without it); with it, nvcc
# would also raise the value kernels from ~48 registers towards 128 and cut their occupancy.
set_source_files_properties(${CMAKE_CURRENT_LIST_DIR}/interpolate_grads.cpp PROPERTIES
  COMPILE_OPTIONS "$<$<COMPILE_LANGUAGE:CUDA>:--maxrregcount=128>")
# The element-batched CPU kernels (operator, interpolation, their shared contractions, the
# assembly fill): compiled for TESSERA_CPU_ARCH (the build machine's instruction
# set by default: the SIMD width, simd::lanes, is fixed there) with multiply-add contraction.
set(TESSERA_CPU_ARCH "native" CACHE STRING
    "Instruction set of the CPU kernels (-march=VALUE, e.g. native, x86-64-v3, skylake-avx512); empty: the compiler's default (portable, 2 lanes on x86-64)")
set(_tessera_cpu_flags -ffp-contract=fast)
if(TESSERA_CPU_ARCH)
  include(CheckCXXCompilerFlag)
  check_cxx_compiler_flag("-march=${TESSERA_CPU_ARCH}" TESSERA_CPU_ARCH_OK)
  if(TESSERA_CPU_ARCH_OK)
    list(APPEND _tessera_cpu_flags -march=${TESSERA_CPU_ARCH})
  else()
    message(WARNING "tessera: the compiler does not accept -march=${TESSERA_CPU_ARCH}; the CPU kernels use its "
                    "default instruction set (set TESSERA_CPU_ARCH to a value it accepts, or empty)")
  endif()
endif()
set(_tessera_cpu_arch_name "")
if(TESSERA_CPU_ARCH AND TESSERA_CPU_ARCH_OK)
  set(_tessera_cpu_arch_name "${TESSERA_CPU_ARCH}")
endif()
set_source_files_properties(${CMAKE_CURRENT_LIST_DIR}/operator/cpu_batched.cpp
                            ${CMAKE_CURRENT_LIST_DIR}/operator/cpu_contract.cpp
                            ${CMAKE_CURRENT_LIST_DIR}/operator/cpu_interp.cpp
                            ${CMAKE_CURRENT_LIST_DIR}/assembly_cpu.cpp
                            ${CMAKE_CURRENT_LIST_DIR}/transfer_cpu.cpp PROPERTIES
  COMPILE_OPTIONS "${_tessera_cpu_flags}")
set_source_files_properties(${CMAKE_CURRENT_LIST_DIR}/operator/cpu_batched.cpp PROPERTIES
  COMPILE_DEFINITIONS "TESSERA_CPU_ARCH_NAME=\"${_tessera_cpu_arch_name}\"")
