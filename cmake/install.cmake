# install.cmake - what `cmake --install BUILD [--prefix DIR]` puts where
# (GNUInstallDirs, so every path follows the prefix):
#
#   bin/intentgate, bin/intentgate-executor
#   libexec/intentgate/intentgate-full  every command but the http:// hook
#                                     (bin/intentgate execs it: cli/main.c)
#   share/intentgate/policies/        the example policy bundle and its tests
#   share/doc/intentgate/             README, LICENSE, CHANGELOG, docs/*.md,
#                                     docs/examples, docs/Containerfile
#   share/man/man1, share/man/man5    intentgate(1), intentgate-executor(1),
#                                     intentgate.conf(5)
#   lib/systemd/system/               intentgate-pdp.service,
#                                     intentgate-executor.service and
#                                     intentgate-witness.service, their
#                                     ExecStart= naming the installed binaries
#
# The units under docs/ name /usr/local/bin, where docs/integrations.md
# copies the binaries by hand; the installed copies name BINDIR instead.
# Their /etc and /var/lib paths are the administrator's and stay as they
# are. IG_SYSTEMD_UNIT_DIR (relative to the prefix, or absolute) moves
# the units, e.g. to pkg-config's systemdsystemunitdir.
include(GNUInstallDirs)

set(IG_SYSTEMD_UNIT_DIR "lib/systemd/system" CACHE STRING
    "Where cmake --install puts the systemd units (relative to the prefix)")

install(TARGETS intentgate intentgate-executor
        RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(TARGETS intentgate-full
        RUNTIME DESTINATION ${CMAKE_INSTALL_LIBEXECDIR}/intentgate)

install(DIRECTORY ${CMAKE_SOURCE_DIR}/policies/bundle/
        DESTINATION ${CMAKE_INSTALL_DATADIR}/intentgate/policies
        FILES_MATCHING PATTERN "*.lua")

install(FILES ${CMAKE_SOURCE_DIR}/README.md ${CMAKE_SOURCE_DIR}/LICENSE
              ${CMAKE_SOURCE_DIR}/CHANGELOG.md
              ${CMAKE_SOURCE_DIR}/CONTRIBUTING.md
              ${CMAKE_SOURCE_DIR}/docs/Containerfile
        DESTINATION ${CMAKE_INSTALL_DOCDIR})
file(GLOB ig_doc_pages ${CMAKE_SOURCE_DIR}/docs/*.md)
install(FILES ${ig_doc_pages} DESTINATION ${CMAKE_INSTALL_DOCDIR})
install(DIRECTORY ${CMAKE_SOURCE_DIR}/docs/examples
        DESTINATION ${CMAKE_INSTALL_DOCDIR} USE_SOURCE_PERMISSIONS
        PATTERN __pycache__ EXCLUDE)

install(FILES ${CMAKE_SOURCE_DIR}/docs/man/intentgate.1
              ${CMAKE_SOURCE_DIR}/docs/man/intentgate-executor.1
        DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)
install(FILES ${CMAKE_SOURCE_DIR}/docs/man/intentgate.conf.5
        DESTINATION ${CMAKE_INSTALL_MANDIR}/man5)

# The units, with ExecStart= pointing into the prefix given at install
# time (`cmake --install --prefix` may differ from the configured one):
# cmake/install_units.cmake rewrites them then. A unit that no longer
# names /usr/local/bin/PROGRAM stops the configuration here already:
# installing one that runs something else would fail only at `systemctl
# start`.
set(ig_units "")
foreach(ig_unit pdp executor witness)
  set(ig_src ${CMAKE_SOURCE_DIR}/docs/intentgate-${ig_unit}.service)
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${ig_src})
  file(READ ${ig_src} ig_text)
  if(NOT ig_text MATCHES "\nExecStart=/usr/local/bin/intentgate[-a-z]* ")
    message(FATAL_ERROR "${ig_src}: no ExecStart=/usr/local/bin/... line to "
                        "point at the installed binary")
  endif()
  list(APPEND ig_units ${ig_src})
endforeach()
install(CODE "
  set(IG_UNITS \"${ig_units}\")
  set(IG_UNIT_DIR \"${IG_SYSTEMD_UNIT_DIR}\")
  set(IG_BINDIR \"${CMAKE_INSTALL_BINDIR}\")
  set(IG_STAGE_DIR \"${CMAKE_BINARY_DIR}/systemd\")
  include(\"${CMAKE_SOURCE_DIR}/cmake/install_units.cmake\")")
