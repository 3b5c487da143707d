# TiletConfig.cmake -- find_package(Tilet) for CMake projects.
#
#   find_package(Tilet REQUIRED)
#   tilet_add_kernel(<target> <file.tl> {ARCH <sm_XY[a]> | ARCHS <sm_XY[a]> ...}
#                    [SYMBOL_PREFIX P] [DEFINES NAME=VALUE ...] [INCLUDE_DIRS dir ...])
#
# Translates file.tl at build time into ${CMAKE_CURRENT_BINARY_DIR}/tilet/
# <target>/<name>.cu, <name>.host.cpp and <name>.h (with SYMBOL_PREFIX, every
# exported function starts with P, so the same file may be added again for
# another ARCH or other DEFINES and linked beside it), with a dependency file (editing
# the .tl file or anything it imports retranslates it), and adds the static
# library <target> built from the .cu (nvcc, -gencode for ARCH) and the
# .host.cpp, linked to CUDA::cudart. ARCHS sm_80 sm_90a sm_100a builds one
# library for several GPU generations: the .cu holds a variant per
# architecture (one -gencode each) and each launch function runs the one for
# the current device; the header's directory is a public
# include directory, so `#include "<name>.h"` finds the launch functions.
# The project needs the CUDA language enabled. TILET_EXECUTABLE may be set
# to a tilet binary; by default the one installed beside this file is used.

# This file is in LIBDIR/cmake/Tilet, LIBDIR being lib or lib/<multiarch>.
get_filename_component(_tilet_prefix "${CMAKE_CURRENT_LIST_DIR}/../../.." ABSOLUTE)
find_program(TILET_EXECUTABLE tilet HINTS "${_tilet_prefix}/bin" "${_tilet_prefix}/../bin" NO_DEFAULT_PATH)
find_program(TILET_EXECUTABLE tilet)
if(NOT TILET_EXECUTABLE)
  set(Tilet_FOUND FALSE)
  set(Tilet_NOT_FOUND_MESSAGE "the tilet executable was not found (set TILET_EXECUTABLE)")
  return()
endif()
find_package(CUDAToolkit REQUIRED)

function(tilet_add_kernel target file)
  cmake_parse_arguments(PARSE_ARGV 2 ARG "" "ARCH;SYMBOL_PREFIX" "ARCHS;DEFINES;INCLUDE_DIRS")
  if(ARG_ARCH AND ARG_ARCHS)
    message(FATAL_ERROR "tilet_add_kernel(${target} ...): give ARCH (one architecture) or ARCHS (several), not both")
  endif()
  if(ARG_ARCH)
    set(ARG_ARCHS "${ARG_ARCH}")
  endif()
  if(NOT ARG_ARCHS)
    message(FATAL_ERROR "tilet_add_kernel(${target} ...): ARCH sm_XY[a] or ARCHS sm_XY[a] ... is required (it picks nvcc's -gencode)")
  endif()
  foreach(arch IN LISTS ARG_ARCHS)
    if(NOT arch MATCHES "^sm_[0-9]+a?$")
      message(FATAL_ERROR "tilet_add_kernel(${target} ...): an architecture must look like sm_80 or sm_90a, not '${arch}'")
    endif()
  endforeach()
  list(JOIN ARG_ARCHS "," arch_list)
  get_filename_component(source "${file}" ABSOLUTE)
  get_filename_component(name "${file}" NAME_WE)
  # One directory per target: the same .tl may be translated for several
  # targets (another ARCH, other DEFINES), each with its own SYMBOL_PREFIX.
  set(dir "${CMAKE_CURRENT_BINARY_DIR}/tilet/${target}")
  set(cu "${dir}/${name}.cu")
  set(host "${dir}/${name}.host.cpp")
  set(header "${dir}/${name}.h")
  set(args --arch ${arch_list})
  if(ARG_SYMBOL_PREFIX)
    list(APPEND args --symbol-prefix ${ARG_SYMBOL_PREFIX})
  endif()
  foreach(define IN LISTS ARG_DEFINES)
    list(APPEND args -D ${define})
  endforeach()
  foreach(include IN LISTS ARG_INCLUDE_DIRS)
    get_filename_component(include "${include}" ABSOLUTE)
    list(APPEND args -I ${include})
  endforeach()
  add_custom_command(
    OUTPUT "${cu}" "${host}" "${header}"
    COMMAND "${CMAKE_COMMAND}" -E make_directory "${dir}"
    COMMAND "${TILET_EXECUTABLE}" "${source}" -o "${cu}" -MD -MF "${dir}/${name}.d" ${args}
    DEPENDS "${source}"
    DEPFILE "${dir}/${name}.d"
    COMMENT "tilet ${file} (${arch_list})"
    VERBATIM)
  add_library(${target} STATIC "${cu}" "${host}")
  target_include_directories(${target} PUBLIC "${dir}")
  target_link_libraries(${target} PUBLIC CUDA::cudart)
  # The generated file's own "// Build:" line: -gencode arch=compute_XY[a],code=sm_XY[a] for each.
  set_target_properties(${target} PROPERTIES CUDA_ARCHITECTURES OFF)
  foreach(arch IN LISTS ARG_ARCHS)
    string(REPLACE "sm_" "compute_" virtual "${arch}")
    target_compile_options(${target} PRIVATE "$<$<COMPILE_LANGUAGE:CUDA>:SHELL:-gencode arch=${virtual},code=${arch}>")
  endforeach()
endfunction()
