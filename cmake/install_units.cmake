# install_units.cmake - run by `cmake --install` (install.cmake): copy the
# systemd units IG_UNITS into IG_UNIT_DIR with ExecStart= naming the
# binaries in IG_BINDIR, both relative to the install-time prefix unless
# absolute. The rewritten units are staged in IG_STAGE_DIR; file(INSTALL)
# adds $DESTDIR.
if(IS_ABSOLUTE "${IG_BINDIR}")
  set(bindir "${IG_BINDIR}")
else()
  set(bindir "${CMAKE_INSTALL_PREFIX}/${IG_BINDIR}")
endif()
if(IS_ABSOLUTE "${IG_UNIT_DIR}")
  set(unitdir "${IG_UNIT_DIR}")
else()
  set(unitdir "${CMAKE_INSTALL_PREFIX}/${IG_UNIT_DIR}")
endif()
file(MAKE_DIRECTORY "${IG_STAGE_DIR}")
foreach(src IN LISTS IG_UNITS)
  get_filename_component(name "${src}" NAME)
  file(READ "${src}" text)
  string(REPLACE "\nExecStart=/usr/local/bin/" "\nExecStart=${bindir}/" text
         "${text}")
  file(WRITE "${IG_STAGE_DIR}/${name}" "${text}")
  file(INSTALL "${IG_STAGE_DIR}/${name}" DESTINATION "${unitdir}"
       FILE_PERMISSIONS OWNER_READ OWNER_WRITE GROUP_READ WORLD_READ)
endforeach()
