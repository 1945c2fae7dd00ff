# version.cmake - what `intentgate --version` and `intentgate-executor
# --version` print: the project() VERSION and, in a git checkout, `git
# describe --always --dirty`.
#
# The target ig_version runs cmake/version_header.cmake at every build,
# so a new commit or an edited file shows without configuring again. The
# script rewrites ig_version.h only when its text changes, so an
# unchanged version recompiles nothing. Outside a git checkout (a release
# tarball) the header carries the version alone.
find_package(Git QUIET)
set(IG_GENERATED_DIR ${CMAKE_BINARY_DIR}/generated)
add_custom_target(ig_version
  COMMAND ${CMAKE_COMMAND} -DSOURCE_DIR=${CMAKE_SOURCE_DIR}
          -DOUT=${IG_GENERATED_DIR}/ig_version.h
          -DVERSION=${PROJECT_VERSION} -DGIT=${GIT_EXECUTABLE}
          -P ${CMAKE_SOURCE_DIR}/cmake/version_header.cmake
  BYPRODUCTS ${IG_GENERATED_DIR}/ig_version.h
  VERBATIM)
foreach(ig_bin intentgate intentgate-full intentgate-executor)
  add_dependencies(${ig_bin} ig_version)
  target_include_directories(${ig_bin} PRIVATE ${IG_GENERATED_DIR})
endforeach()
