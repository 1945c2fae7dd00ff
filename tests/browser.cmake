# tests/browser.cmake - the approval pages in a real browser: Debian's
# chromium driven by playwright-core (tests/browser/run.sh). Always
# registered: without chromium, node or the Node packages (installed
# before the suite by scripts/test.sh, see scripts/deps.sh) the test fails
# with one line naming what is missing; it is never left out.
add_test(NAME ui.browser
  COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/browser/run.sh ${CMAKE_BINARY_DIR})
set_tests_properties(ui.browser PROPERTIES TIMEOUT 300)
