# Sources of tessera's finite-element layer (host-side, compiled by the host compiler).
target_sources(tessera PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/quadrature.cpp
  ${CMAKE_CURRENT_LIST_DIR}/basis1d.cpp)
