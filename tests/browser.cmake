# tests/browser.cmake - the approval pages in a real browser: Debian's
# chromium driven by playwright-core (tests/browser/run.sh). Added only
# when chromium and node are installed; CI installs both.
find_program(IG_NODE_PROGRAM node)
if(NOT EXISTS /usr/bin/chromium)
  message(STATUS "ui.browser skipped: /usr/bin/chromium is not installed "
                 "(apt-get install chromium)")
elseif(NOT IG_NODE_PROGRAM)
  message(STATUS "ui.browser skipped: node is not installed")
else()
  add_test(NAME ui.browser
    COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/browser/run.sh ${CMAKE_BINARY_DIR})
  set_tests_properties(ui.browser PROPERTIES TIMEOUT 300)
endif()
