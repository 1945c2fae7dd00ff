# hardening.cmake - what every build of intentgate's programs gets from
# the compiler and linker, unless configured with -DIG_HARDEN=OFF:
#
#   -fstack-protector-strong   a canary in every function with a local
#                              array or whose address is taken
#   -D_FORTIFY_SOURCE=3        checked memcpy/snprintf/read... wherever
#                              the compiler knows the object's size (3
#                              with gcc >= 12 or clang >= 9, else 2); only
#                              in optimised builds (it needs -O) and not
#                              under the sanitizers, which replace those
#                              checks with their own
#   PIE                        executables load at a random address
#   -z relro -z now            full RELRO: the GOT is read-only once
#                              every symbol is bound at start (BIND_NOW)
#   -z noexecstack             no executable stack
#
# tests/ci/test_install.sh checks the installed binaries for each of them.
option(IG_HARDEN "Build with stack protector, FORTIFY_SOURCE, PIE and full RELRO" ON)

include(CheckCCompilerFlag)
include(CheckCSourceCompiles)
include(CheckPIESupported)

if(IG_HARDEN)
  check_c_compiler_flag(-fstack-protector-strong IG_HAVE_STACK_PROTECTOR)
  if(NOT IG_HAVE_STACK_PROTECTOR)
    message(FATAL_ERROR "IG_HARDEN: the compiler lacks -fstack-protector-strong "
                        "(configure with -DIG_HARDEN=OFF to build without)")
  endif()
  add_compile_options(-fstack-protector-strong)

  check_pie_supported(OUTPUT_VARIABLE ig_pie_why LANGUAGES C)
  if(NOT CMAKE_C_LINK_PIE_SUPPORTED)
    message(FATAL_ERROR "IG_HARDEN: cannot link PIE executables: ${ig_pie_why}")
  endif()
  set(CMAKE_POSITION_INDEPENDENT_CODE ON)
  # That compiles the static libraries -fPIC, where gcc assumes any global
  # function may be replaced at load time and so will not inline it: ours
  # are linked into executables only, so nothing is replaced.
  check_c_compiler_flag(-fno-semantic-interposition IG_HAVE_NO_INTERPOSITION)
  if(IG_HAVE_NO_INTERPOSITION)
    add_compile_options(-fno-semantic-interposition)
  endif()

  add_link_options(LINKER:-z,relro,-z,now LINKER:-z,noexecstack)

  if(NOT IG_SANITIZE AND NOT IG_FUZZ)
    # glibc quietly falls back to level 2 when the compiler cannot do 3:
    # ask it which level it took.
    set(CMAKE_REQUIRED_FLAGS "-O2 -U_FORTIFY_SOURCE -D_FORTIFY_SOURCE=3")
    check_c_source_compiles([=[
#include <stdio.h>
#if !defined(__USE_FORTIFY_LEVEL) || __USE_FORTIFY_LEVEL < 3
#error no _FORTIFY_SOURCE=3
#endif
int main(void) { return 0; }
]=] IG_HAVE_FORTIFY3)
    unset(CMAKE_REQUIRED_FLAGS)
    if(IG_HAVE_FORTIFY3)
      set(ig_fortify 3)
    else()
      set(ig_fortify 2)
    endif()
    # Undefined first: a toolchain that predefines it (Ubuntu's gcc) would
    # otherwise warn about a redefinition, an error under IG_WERROR.
    add_compile_options(
      "$<$<CONFIG:Release,RelWithDebInfo,MinSizeRel>:-U_FORTIFY_SOURCE>"
      "$<$<CONFIG:Release,RelWithDebInfo,MinSizeRel>:-D_FORTIFY_SOURCE=${ig_fortify}>")
  endif()
endif()
