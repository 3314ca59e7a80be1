# Sources of tessera's finite-element layer. Host-only files are compiled by the host
# compiler; files that launch kernels are also listed in tessera_cuda_sources().
target_sources(tessera PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/quadrature.cpp
  ${CMAKE_CURRENT_LIST_DIR}/basis1d.cpp
  ${CMAKE_CURRENT_LIST_DIR}/reference_element.cpp
  ${CMAKE_CURRENT_LIST_DIR}/mesh.cpp)
